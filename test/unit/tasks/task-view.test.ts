import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskRow } from '../../../src/db/schema.ts';
import { toTaskView } from '../../../src/tasks/task-view.ts';

const baseTask: TaskRow & { session_external_id: string | null } = {
  id: 't1', tenant_id: 'tn', user_id: 'u', session_id: 's-uuid', session_external_id: null, query: 'q',
  requested_mode: null, mode: 'simple', context: {}, options: {}, status: 'COMPLETED', result: '{"a":1}', error: null,
  metadata: {}, complexity_score: null, agents_used: 1, model_used: 'm1', provider: 'p1',
  created_at: new Date(0), started_at: new Date(1000), completed_at: new Date(3500), updated_at: new Date(3500),
  pause_requested: false, paused_at: null, pause_reason: null, paused_by: null, cancel_requested: false,
  cancel_reason: null, cancelled_by: null, token_budget: null, parked_at_step: null, schedule_id: null, cost_budget_usd: null, approval_wait_ms: '0', in_step_paused_at: null, in_step_pause_ms: '0',
};

test('a JSON result is also returned parsed as `response`', () => {
  assert.deepEqual(toTaskView(baseTask, [], 1000).response, { a: 1 });
  assert.equal(toTaskView({ ...baseTask, result: 'plain {not json' }, [], 1000).response, undefined);
  assert.equal(toTaskView({ ...baseTask, result: '{broken' }, [], 1000).response, undefined);
});

test('usage sums the breakdown and percentages share the cost', () => {
  const view = toTaskView(baseTask, [
    { provider: 'p1', model: 'm1', executions: 2, input_tokens: 100, output_tokens: 50, total_tokens: 150, cached_input_tokens: 60, cache_write_tokens: 40, cost_usd: 0.003 },
    { provider: 'p2', model: 'm2', executions: 1, input_tokens: 10, output_tokens: 5, total_tokens: 15, cached_input_tokens: 0, cache_write_tokens: 0, cost_usd: 0.001 },
  ], 1000);
  assert.deepEqual(view.usage, { total_tokens: 165, input_tokens: 110, output_tokens: 55, cached_input_tokens: 60, cache_write_tokens: 40, estimated_cost: 0.004 });
  assert.deepEqual((view.metadata.model_breakdown as any[]).map((row) => row.cached_input_tokens), [60, 0]);
  assert.deepEqual((view.metadata.model_breakdown as any[]).map((row) => row.cache_write_tokens), [40, 0]);
  assert.deepEqual((view.metadata.model_breakdown as any[]).map((row) => row.percentage), [75, 25]);
  assert.equal(view.unified_response.performance.execution_time_ms, 2500);
  assert.equal(view.unified_response.stop_reason, 'completed');
});

test('the session id shown is the custom id when the session has one', () => {
  assert.equal(toTaskView({ ...baseTask, session_external_id: 'my-chat' }, [], 1000).session_id, 'my-chat');
  assert.equal(toTaskView(baseTask, [], 1000).session_id, 's-uuid');
});

test('metadata carries unified_response too, and context the budget (spec 2.5)', () => {
  const view = toTaskView({ ...baseTask, context: { locale: 'fr' }, token_budget: 100 }, [
    { provider: 'p1', model: 'm1', executions: 1, input_tokens: 100, output_tokens: 50, total_tokens: 150, cached_input_tokens: 0, cache_write_tokens: 0, cost_usd: 0.003 },
  ], 1000);
  assert.deepEqual(view.metadata.unified_response, view.unified_response);
  assert.deepEqual(view.context, { locale: 'fr', budget_max: 100, budget_used: 150, budget_remaining: 0 });
  assert.deepEqual(toTaskView(baseTask, [], 1000).context, { budget_max: 1000, budget_used: 0, budget_remaining: 1000 });
});
