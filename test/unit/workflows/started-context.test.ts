import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STARTED_CONTEXT_MAX_BYTES, startedContextPayload } from '../../../src/workflows/runtime/started-context.ts';

test('the server\'s own context keys are left out', () => {
  const payload = startedContextPayload({
    role: 'analysis', prompt_params: { a: 1 }, external_id: 'my-session',
    conversation_history: [{ role: 'user', content: 'hi' }], openai_model: 'service-chat', max_output_tokens: 100,
  });
  assert.deepEqual(payload, { task_context: { role: 'analysis', prompt_params: { a: 1 }, max_output_tokens: 100 } });
});

test('over the cap, the largest values are left out until the rest fits, and listed', () => {
  const context = { a: 'x'.repeat(5_000), b: 'y'.repeat(4_000), c: 'z'.repeat(9_000), d: 1 };
  const payload = startedContextPayload(context);
  assert.deepEqual(Object.keys(payload.task_context), ['b', 'd']);
  assert.deepEqual(payload.task_context_omitted, ['c', 'a']);
  assert.ok(JSON.stringify(payload.task_context).length <= STARTED_CONTEXT_MAX_BYTES);
});

test('a context exactly at the cap is kept whole; one byte more is not', () => {
  const filler = (bytes: number) => ({ k: 'v'.repeat(bytes - JSON.stringify({ k: '' }).length) });
  assert.equal(startedContextPayload(filler(STARTED_CONTEXT_MAX_BYTES)).task_context_omitted, undefined);
  assert.deepEqual(startedContextPayload(filler(STARTED_CONTEXT_MAX_BYTES + 1)), { task_context: {}, task_context_omitted: ['k'] });
});

test('the cap counts bytes, not characters', () => {
  const payload = startedContextPayload({ text: 'é'.repeat(5_000) });
  assert.deepEqual(payload.task_context_omitted, ['text']);
});
