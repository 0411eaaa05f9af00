import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { start as startAnthropic } from '../fixtures/anthropic-stand-in.ts';
import { start as startOpenAi } from '../fixtures/openai-stand-in.ts';
import type { ScriptedReply, StandIn } from '../fixtures/stand-in-server.ts';
import { startGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { modelCatalogFile } from '../helpers/model-catalog-file.ts';

/**
 * A provider may fail after it has answered HTTP 200 and begun to stream: Anthropic sends `event: error` with an
 * `overloaded_error` under load, an OpenAI-style server a `{"error": …}` chunk. With one deployment configured (the
 * common case) such a failure is retried there like a 529 or a 5xx, and a refusal is not retried at all.
 */

/** One deployment of one model: `claude` (Anthropic's format) or `local` (OpenAI-compatible). */
function writeCatalog(t: TestContext, kind: 'anthropic' | 'openai-compatible'): string {
  const provider = kind === 'anthropic'
    ? 'only: { kind: anthropic, api_key_env: STAND_IN_KEY, base_url_env: STAND_IN_URL }'
    : 'only: { kind: openai-compatible, base_url_env: STAND_IN_URL }';
  const file = modelCatalogFile(t, [
    'default_tier: small',
    'providers:',
    `  ${provider}`,
    '  mock: { kind: mock }',
    'models:',
    '  - { name: only-model, provider: only, model_id: served-model, tier: small, priority: 1, context_window: 100000, max_output_tokens: 1000, pricing: { input_per_million: 1, output_per_million: 2 } }',
  ]);
  return file;
}

/** A task's first completion also names its session: that call is not the agent's. */
const isTitleCall = (body: any) => JSON.stringify([body.system, body.messages]).includes('Write a title');

/** Scripts the agent's calls (0-based among them), leaving the session-title call alone. */
function agentScript(replies: Array<ScriptedReply | undefined>) {
  let agentCall = 0;
  return (_index: number, body: any) => (isTitleCall(body) ? undefined : replies[agentCall++]);
}

async function gatewayFor(t: TestContext, kind: 'anthropic' | 'openai-compatible', provider: StandIn, env: Record<string, string> = {}): Promise<Gateway> {
  return startGateway(t, {
    env: {
      MODELS_CONFIG: writeCatalog(t, kind), STAND_IN_KEY: 'test-key', STAND_IN_URL: `${provider.url}/v1`, EVENT_PARTIAL_INTERVAL_MS: '10', ...env,
    },
  });
}

async function runTask(gateway: Gateway, query: string) {
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query });
  assert.equal(submitted.status, 200, submitted.text);
  return waitForTask(gateway, submitted.body.task_id);
}

async function storedDeltas(gateway: Gateway, taskId: string): Promise<string> {
  const { rows } = await gateway.sql.query(`select message from task_events where task_id = $1 and type = 'LLM_PARTIAL' order by seq`, [taskId]);
  return rows.map((row) => row.message).join('');
}

const agentCalls = (provider: StandIn) => provider.requests.filter((request) => !isTitleCall(request.body));

const ANSWER = 'Paris is the capital of France and sits on the river Seine in the north of the country.';

test('Anthropic overloaded_error events in the stream, before any text and mid-answer, are retried on the one deployment: the task completes once and its deltas join to the answer', async (t) => {
  const overloaded = { type: 'overloaded_error', message: 'Overloaded' };
  const provider = await startAnthropic({
    answer: ANSWER, wordDelayMs: 20,
    script: agentScript([{ breakAfterWords: 0, streamError: overloaded }, { breakAfterWords: 5, streamError: overloaded }]),
  });
  t.after(() => provider.close());
  const gateway = await gatewayFor(t, 'anthropic', provider);
  const task = await runTask(gateway, 'What is the capital of France?');
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.result, ANSWER);
  assert.deepEqual(agentCalls(provider).map((request) => request.status), [200, 200, 200], 'two streams that failed, then the answer');
  assert.equal(await storedDeltas(gateway, task.task_id), ANSWER, 'the words before the mid-answer error were not delivered twice');
});

test('an error chunk in an OpenAI-compatible stream (server_error) is retried and the task completes', async (t) => {
  const provider = await startOpenAi({
    answer: ANSWER, wordDelayMs: 20,
    script: agentScript([{ breakAfterWords: 3, streamError: { type: 'server_error', message: 'The server had an error while processing your request.' } }]),
  });
  t.after(() => provider.close());
  const gateway = await gatewayFor(t, 'openai-compatible', provider);
  const task = await runTask(gateway, 'What is the capital of France?');
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.result, ANSWER);
  assert.equal(agentCalls(provider).length, 2);
  assert.equal(await storedDeltas(gateway, task.task_id), ANSWER);
});

test('a refusal sent as an error event in the stream is not retried, and the task\'s error names the provider, the model and the provider\'s reason', async (t) => {
  const provider = await startAnthropic({
    answer: ANSWER,
    script: agentScript([{ breakAfterWords: 0, streamError: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' } }]),
  });
  t.after(() => provider.close());
  const gateway = await gatewayFor(t, 'anthropic', provider);
  const task = await runTask(gateway, 'What is the capital of France?');
  assert.equal(task.status, 'TASK_STATUS_FAILED');
  assert.match(task.error, /only\/only-model: bad request \(error event in the stream: invalid_request_error\): messages: text content blocks must be non-empty/);
  assert.equal(agentCalls(provider).length, 1, 'not retried');
});

test('a provider that never answers, or goes quiet mid-answer, is given up on after PROVIDER_STALL_SECONDS and asked again: the task completes once', async (t) => {
  const provider = await startOpenAi({
    answer: ANSWER, wordDelayMs: 20,
    script: agentScript([{ silent: true }, { breakAfterWords: 4, stall: true }]),
  });
  t.after(() => provider.close());
  const gateway = await gatewayFor(t, 'openai-compatible', provider, { PROVIDER_STALL_SECONDS: '1' });
  const startedAt = Date.now();
  const task = await runTask(gateway, 'What is the capital of France?');
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.result, ANSWER);
  assert.equal(agentCalls(provider).length, 3, 'the silent call and the stalled one were each given up on once');
  assert.equal(await storedDeltas(gateway, task.task_id), ANSWER, 'the words before the stall were not delivered twice');
  assert.ok(Date.now() - startedAt < 15_000, `done in ${Date.now() - startedAt} ms`);
});

test('a slow stream that keeps sending is not a stall: words 400 ms apart under a 1 s limit make one call', async (t) => {
  const answer = 'Slow but steady words.';
  const provider = await startOpenAi({ answer, wordDelayMs: 400 });
  t.after(() => provider.close());
  const gateway = await gatewayFor(t, 'openai-compatible', provider, { PROVIDER_STALL_SECONDS: '1' });
  const task = await runTask(gateway, 'Take your time.');
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.result, answer);
  assert.equal(agentCalls(provider).length, 1);
});
