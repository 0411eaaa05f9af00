import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

describe('cached input tokens in a task\'s usage (issue 30 Scope 4)', () => {
  const gateway = useGateway();

  it('a call without cached tokens records none; cached tokens recorded for a call show in usage and model_breakdown', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'What is the capital of France?', mode: 'simple' });
    assert.equal(submitted.status, 200, JSON.stringify(submitted.body));
    const taskId = submitted.body.task_id as string;
    const done = await waitForTask(gateway(), taskId);
    assert.equal(done.status, 'TASK_STATUS_COMPLETED', done.error);
    assert.equal(done.usage.cached_input_tokens, 0);
    const { rows: [own] } = await gateway().sql.query('select * from usage_records where task_id = $1', [taskId]);
    assert.equal(own.cached_input_tokens, 0);

    // A second call of the same model that read 800 of its 1000 input tokens from the prompt cache.
    await gateway().sql.query(
      `insert into usage_records (call_key, task_id, tenant_id, user_id, session_id, agent_id, provider, model, input_tokens, output_tokens, total_tokens, cached_input_tokens, cost_usd)
       values ($1, $2, $3, $4, $5, 'cached-call', $6, $7, 1000, 10, 1010, 800, 0.0001)`,
      [`${taskId}:cached`, taskId, own.tenant_id, own.user_id, own.session_id, own.provider, own.model],
    );
    const task = (await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body;
    assert.equal(task.usage.cached_input_tokens, 800);
    assert.equal(task.usage.input_tokens, own.input_tokens + 1000, 'cached tokens are a part of the input, not added to it');
    const [breakdown] = task.metadata.model_breakdown;
    assert.equal(breakdown.cached_input_tokens, 800);
    assert.equal(breakdown.executions, 2);
  });
});
