import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start as startStandIn } from '../fixtures/openai-stand-in.ts';
import { startGateway, waitForTask } from '../helpers/gateway.ts';

test('a task routed to an OpenAI-compatible server records its provider, model and token counts', async (t) => {
  const standIn = await startStandIn({ answer: 'Bonjour from the stand-in.', usage: { promptTokens: 123, completionTokens: 45 } });
  t.after(() => standIn.close());
  const gateway = await startGateway(t, {
    env: { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1`, OPENAI_COMPATIBLE_MODEL: 'served-model-7b' },
  });
  const readiness = await gateway.request('GET', '/readiness');
  assert.match(readiness.body.checks.models, /openai_compatible/);

  const submitted = await gateway.request('POST', '/api/v1/tasks', {
    query: 'Say hello in French', provider_override: 'openai_compatible', model_tier: 'small',
    context: { system_prompt: 'You are terse.' },
  });
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.result, 'Bonjour from the stand-in.');
  assert.equal(task.provider, 'openai_compatible');
  assert.equal(task.model_used, 'local-small');
  const { rows } = await gateway.sql.query(`select provider, model, input_tokens, output_tokens, total_tokens from usage_records where task_id = $1 and agent_id = 'simple-agent'`, [task.task_id]);
  assert.deepEqual(rows, [{ provider: 'openai_compatible', model: 'local-small', input_tokens: 123, output_tokens: 45, total_tokens: 168 }]);
  assert.ok(task.usage.total_tokens >= 168, 'the task usage includes the answer (and the session title call, if it already ran)');

  const request = standIn.requests.find((recorded) => recorded.path === '/v1/chat/completions');
  assert.ok(request, 'the gateway called the stand-in over HTTP');
  assert.equal(request.body.model, 'served-model-7b');
  assert.equal(request.body.stream, true);
  assert.deepEqual(request.body.messages.map((message: any) => message.role), ['system', 'user']);
  assert.equal(request.body.messages[1].content, 'Say hello in French');
});

test('a provider failing before any token falls back to the next provider of the tier', async (t) => {
  const failing = await startStandIn({ failWithStatus: 500 });
  const working = await startStandIn({ answer: 'Answer from the second provider.' });
  t.after(async () => { await failing.close(); await working.close(); });
  const gateway = await startGateway(t, {
    env: { OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1`, OLLAMA_BASE_URL: `${working.url}/v1` },
  });
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'fall back please', model_tier: 'small' });
  const task = await waitForTask(gateway, submitted.body.task_id);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.provider, 'ollama');
  assert.equal(task.result, 'Answer from the second provider.');
  assert.ok(failing.requests.length > 0, 'the first provider was tried');
});

test('with provider_override there is no fallback: the task fails with the reason and closes its stream', async (t) => {
  const failing = await startStandIn({ failWithStatus: 500 });
  t.after(() => failing.close());
  const gateway = await startGateway(t, { env: { OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1` } });
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'will fail', provider_override: 'openai_compatible' });
  const task = await waitForTask(gateway, submitted.body.task_id);
  assert.equal(task.status, 'TASK_STATUS_FAILED');
  assert.match(task.error, /model call failed \(openai_compatible\/local-small: /);
  const { rows } = await gateway.sql.query(`select type from task_events where task_id = $1 order by seq`, [submitted.body.task_id]);
  assert.deepEqual(rows.slice(-2).map((row) => row.type), ['ERROR_OCCURRED', 'STREAM_END']);
});
