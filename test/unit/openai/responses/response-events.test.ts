import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskEvent } from '../../../../src/events/append-event.ts';
import type { ResponseRecord } from '../../../../src/openai/responses/queries.ts';
import { createResponseEventMapper, type ResponseStreamEvent } from '../../../../src/openai/responses/response-events.ts';
import { buildResponseView } from '../../../../src/openai/responses/response-view.ts';

const TASK_ID = '0b7c6f3e-1d2a-4c5b-8e9f-0a1b2c3d4e5f';
const record: ResponseRecord = {
  taskId: TASK_ID, previousTaskId: null, model: 'service-chat', instructions: null, input: [],
  parameters: {
    max_output_tokens: null, metadata: {}, user: null, safety_identifier: null, parallel_tool_calls: true,
    temperature: null, top_p: null, tools: [], tool_choice: 'auto', text_format: { type: 'text' },
  },
  background: true, stored: true, createdAt: new Date('2026-01-01T00:00:00Z'),
};

let seq = 0;
const event = (type: string, fields: Partial<TaskEvent> = {}): TaskEvent => ({
  workflow_id: TASK_ID, type, agent_id: null, message: null, payload: null, timestamp: '2026-01-01T00:00:00Z', seq: ++seq, stream_id: `1-${seq}`, ...fields,
});
const delta = (text: string) => event('LLM_PARTIAL', { agent_id: 'simple-agent', message: text, payload: { final_answer: true } });

const LOG = [event('WORKFLOW_STARTED'), event('AGENT_STARTED'), delta('Hello'), delta(', '), delta('world'),
  event('LLM_OUTPUT', { agent_id: 'final_output', message: 'Hello, world' })];
const completed = buildResponseView(record, { status: 'COMPLETED', result: 'Hello, world', metadata: {}, error: null, completedAt: new Date('2026-01-01T00:00:05Z') },
  { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } });

function replay(log: TaskEvent[], final: typeof completed): ResponseStreamEvent[] {
  const mapper = createResponseEventMapper(record);
  return [...mapper.opening(), ...log.flatMap((entry) => mapper.onTaskEvent(entry)), ...mapper.closing(final)];
}

test('a completed response streams its typed events numbered 0, 1, 2… with the deltas making the final text', () => {
  const events = replay(LOG, completed);
  assert.deepEqual(events.map((entry) => entry.type), [
    'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
    'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta',
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
  ]);
  assert.deepEqual(events.map((entry) => entry.sequence_number), events.map((_, index) => index));
  assert.equal(events[7].text, 'Hello, world');
  assert.equal((events[0].response as { status: string }).status, 'queued');
});

test('the events depend on the log alone (no clock, no random id), so every process numbers and names them alike', () => {
  assert.deepEqual(JSON.stringify(replay(LOG, completed)), JSON.stringify(replay(LOG, completed)));
});

test('an answer recorded only whole (LLM_OUTPUT) is one delta; an empty answer still closes its message', () => {
  const whole = replay([event('WORKFLOW_STARTED'), event('LLM_OUTPUT', { agent_id: 'final_output', message: 'Hello, world' })], completed);
  assert.deepEqual(whole.filter((entry) => entry.type === 'response.output_text.delta').map((entry) => entry.delta), ['Hello, world']);
  const empty = buildResponseView(record, { status: 'COMPLETED', result: '', metadata: {}, error: null, completedAt: null }, undefined);
  const quiet = replay([event('WORKFLOW_STARTED')], empty);
  assert.deepEqual(quiet.map((entry) => entry.type).slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
});

test('a cancelled response closes its open message as incomplete and ends with response.failed saying cancelled', () => {
  const cancelled = buildResponseView(record, { status: 'CANCELLED', result: null, metadata: {}, error: null, completedAt: null }, undefined);
  const events = replay([event('WORKFLOW_STARTED'), delta('Hel')], cancelled);
  const last = events.at(-1)!;
  assert.equal(last.type, 'response.failed');
  assert.equal((last.response as { status: string }).status, 'cancelled');
  assert.equal((events.at(-2)!.item as { status: string }).status, 'incomplete');
});

test('an answer cut at the output limit is an incomplete response: its message closes incomplete, then response.incomplete', () => {
  const cut = buildResponseView(record, { status: 'COMPLETED', result: 'Hello, wor', metadata: { finish_reason: 'length' }, error: null, completedAt: new Date('2026-01-01T00:00:05Z') },
    { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } });
  assert.equal(cut.status, 'incomplete');
  assert.deepEqual(cut.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(cut.completed_at, null);
  assert.deepEqual(cut.usage?.input_tokens_details, { cached_tokens: 2 });
  const events = replay([event('WORKFLOW_STARTED'), delta('Hello, wor')], cut);
  assert.deepEqual(events.map((entry) => entry.type).slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
  assert.equal((events.at(-2)!.item as { status: string }).status, 'incomplete');
  assert.equal(events.at(-4)!.text, 'Hello, wor');
  // Not streamed (a workflow that records its answer whole), the text still comes before the end.
  const whole = replay([event('WORKFLOW_STARTED')], cut);
  assert.deepEqual(whole.filter((entry) => entry.type === 'response.output_text.delta').map((entry) => entry.delta), ['Hello, wor']);
});

test('a content filter that stopped the answer is named as the reason it is incomplete; a natural stop completes', () => {
  const view = (metadata: Record<string, unknown>) => buildResponseView(record, { status: 'COMPLETED', result: 'Hi', metadata, error: null, completedAt: null }, undefined);
  assert.deepEqual(view({ finish_reason: 'content_filter' }).incomplete_details, { reason: 'content_filter' });
  assert.equal(view({ finish_reason: 'stop' }).status, 'completed');
  assert.equal(view({}).status, 'completed');
});
