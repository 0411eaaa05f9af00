import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { costUsd } from '../../../src/llm/cost.ts';
import { loadModelCatalog } from '../../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../../src/llm/provider-registry.ts';
import { streamModelText } from '../../../src/llm/stream-model-text.ts';
import { start, type StandInOptions } from '../../fixtures/openai-stand-in.ts';

const catalog = loadModelCatalog(new URL('../../../config/models.yaml', import.meta.url).pathname);
const messages = [{ role: 'user' as const, content: 'Say hello' }];

async function startStandIn(t: TestContext, options: StandInOptions = {}) {
  const standIn = await start(options);
  t.after(() => standIn.close());
  return standIn;
}

test('the mock answers when no provider is configured, with deltas, usage and cost', async () => {
  const registry = createModelRegistry(catalog, {});
  const deltas: string[] = [];
  const onDelta = (text: string) => deltas.push(text);
  const result = await streamModelText(registry, { selection: {}, system: 'Be brief.', messages, onDelta });
  assert.equal(result.text, 'System prompt "Be brief.". Mock answer to "Say hello" after 0 earlier messages.');
  assert.equal(deltas.join(''), result.text);
  assert.deepEqual([result.provider, result.model], ['mock', 'mock-small']);
  assert.equal(result.inputTokens, Math.ceil(('Be brief.' + 'Say hello').length / 4));
  assert.equal(result.outputTokens, deltas.length);
  const mockSmall = catalog.models.find((model) => model.name === 'mock-small')!;
  assert.equal(result.costUsd, costUsd(mockSmall, result.inputTokens, result.outputTokens));
  assert.ok(result.costUsd > 0);
});

test('an OpenAI-compatible server is called with the configured model id and its usage recorded', async (t) => {
  const standIn = await startStandIn(t, { answer: 'Hello from the local model.' });
  const registry = createModelRegistry(catalog, {
    OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1`,
    OPENAI_COMPATIBLE_MODEL: 'qwen-7b',
  });
  const deltas: string[] = [];
  const onDelta = (text: string) => deltas.push(text);
  const selection = { modelTier: 'medium' };
  const result = await streamModelText(registry, { selection, system: 'Be brief.', messages, onDelta });
  assert.deepEqual(result, {
    text: 'Hello from the local model.', model: 'local-medium', provider: 'openai_compatible',
    inputTokens: 11, outputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0, finishReason: 'stop', attempts: 1,
  });
  assert.deepEqual(deltas, ['Hello ', 'from ', 'the ', 'local ', 'model.']);
  const [request] = standIn.requests;
  assert.equal(request.path, '/v1/chat/completions');
  assert.equal(request.body.model, 'qwen-7b');
  assert.equal(request.body.stream, true);
  assert.deepEqual(request.body.stream_options, { include_usage: true });
  assert.deepEqual(request.body.messages,
    [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }]);
});

test('a provider failing before any text is retried until its cooldown, then the next candidate answers', async (t) => {
  const failing = await startStandIn(t, { failWithStatus: 500 });
  const working = await startStandIn(t, { answer: 'Fallback answer.' });
  const registry = createModelRegistry(catalog, {
    OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1`,
    OLLAMA_BASE_URL: `${working.url}/v1`,
  });
  const result = await streamModelText(registry, { selection: {}, messages });
  assert.deepEqual([result.provider, result.model, result.text], ['ollama', 'ollama-small', 'Fallback answer.']);
  assert.equal(result.attempts, 2, 'the fallback is counted');
  assert.equal(failing.requests.length, 3, 'three consecutive failures put the deployment in cooldown');
  assert.equal(working.requests[0].body.model, 'llama3.2');
});

test('when every candidate fails, the error names each provider and its failure', async (t) => {
  const failing = await startStandIn(t, { failWithStatus: 500 });
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1` });
  await assert.rejects(streamModelText(registry, { selection: {}, messages }), /model call failed \(openai_compatible\/local-small: .*stand-in failure/);
});

test('a stream cut after text is restarted on the same deployment, and the deltas join to the answer exactly', async (t) => {
  const breaking = await startStandIn(t, { answer: 'One two three four.', script: (index) => (index === 0 ? { breakAfterWords: 2 } : undefined) });
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${breaking.url}/v1` });
  const deltas: string[] = [];
  const result = await streamModelText(registry, { selection: {}, messages, onDelta: (text) => deltas.push(text) });
  assert.equal(result.text, 'One two three four.');
  assert.equal(deltas.join(''), result.text);
  assert.equal(breaking.requests.length, 2);
});

test('a 400 is neither retried nor sent to another provider, and the error names provider, model and reason', async (t) => {
  const refusing = await startStandIn(t, { failWithStatus: 400, failMessage: 'Invalid value for temperature' });
  const spare = await startStandIn(t);
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${refusing.url}/v1`, OLLAMA_BASE_URL: `${spare.url}/v1` });
  await assert.rejects(streamModelText(registry, { selection: {}, messages }), /model call failed \(openai_compatible\/local-small: bad request \(HTTP 400\): .*Invalid value for temperature/);
  assert.equal(refusing.requests.length, 1);
  assert.equal(spare.requests.length, 0);
});

test('a context-length error drops the oldest history once and sends the call again', async (t) => {
  const contextError = { status: 400, message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded' };
  const standIn = await startStandIn(t, { answer: 'Short enough now.', script: (index) => (index === 0 ? contextError : undefined) });
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1` });
  const history = [
    { role: 'user' as const, content: 'first question' }, { role: 'assistant' as const, content: 'first answer' },
    { role: 'user' as const, content: 'second question' }, { role: 'assistant' as const, content: 'second answer' },
    { role: 'user' as const, content: 'third question' },
  ];
  const result = await streamModelText(registry, { selection: {}, messages: history });
  assert.equal(result.text, 'Short enough now.');
  assert.deepEqual(standIn.requests.map((request) => request.body.messages.length), [5, 3]);
  assert.equal(standIn.requests[1].body.messages[0].content, 'second question');
});

test('a context-length error on the last turn alone fails naming the cause, without a retry', async (t) => {
  const standIn = await startStandIn(t, { failWithStatus: 400, failMessage: 'prompt is too long: 300000 tokens > 200000 maximum' });
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1` });
  await assert.rejects(streamModelText(registry, { selection: {}, messages }), /openai_compatible\/local-small: context length exceeded \(HTTP 400\)/);
  assert.equal(standIn.requests.length, 1);
});

test('a 429 is retried after the Retry-After the provider sent', async (t) => {
  const standIn = await startStandIn(t, { script: (index) => (index === 0 ? { status: 429, retryAfterMs: 700 } : undefined) });
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1` });
  await streamModelText(registry, { selection: {}, messages });
  assert.equal(standIn.requests.length, 2);
  assert.ok(standIn.requests[1].at - standIn.requests[0].at >= 690, `retried after ${standIn.requests[1].at - standIn.requests[0].at} ms`);
});

test('a failure after text was delivered, repeated until the cooldown, is rethrown without trying another provider', async (t) => {
  const breaking = await startStandIn(t, { answer: 'One two three four.', breakAfterWords: 2 });
  const spare = await startStandIn(t);
  const registry = createModelRegistry(catalog, {
    OPENAI_COMPATIBLE_BASE_URL: `${breaking.url}/v1`,
    OLLAMA_BASE_URL: `${spare.url}/v1`,
  });
  const deltas: string[] = [];
  const onDelta = (text: string) => deltas.push(text);
  await assert.rejects(streamModelText(registry, { selection: {}, messages, onDelta }));
  assert.deepEqual(deltas, ['One ', 'two ']);
  assert.equal(spare.requests.length, 0);
});

test('an abort mid-answer rejects with an AbortError after partial deltas', async () => {
  const registry = createModelRegistry(catalog, {});
  const controller = new AbortController();
  const deltas: string[] = [];
  const call = streamModelText(registry, {
    selection: {},
    messages,
    mockDelayMs: 300,
    abortSignal: controller.signal,
    onDelta: (text) => {
      deltas.push(text);
      controller.abort();
    },
  });
  await assert.rejects(call, { name: 'AbortError' });
  assert.equal(deltas.length, 1);
});

test('an abort before the first delta rejects promptly and tries no other candidate', async () => {
  const registry = createModelRegistry(catalog, {});
  const controller = new AbortController();
  const started = performance.now();
  setTimeout(() => controller.abort(), 50);
  const abortSignal = controller.signal;
  const call = streamModelText(registry, { selection: {}, messages, mockDelayMs: 60_000, abortSignal });
  await assert.rejects(call, { name: 'AbortError' });
  assert.ok(performance.now() - started < 1000);
});

test('selection errors surface before any call', async () => {
  const registry = createModelRegistry(catalog, {});
  await assert.rejects(streamModelText(registry, { selection: { modelOverride: 'gpt-9' }, messages }),
    { statusCode: 400, message: 'unknown model: gpt-9' });
});

test('each fallback is reported before the next candidate is tried, and a last failure is not', async (t) => {
  const failing = await startStandIn(t, { failWithStatus: 500 });
  const working = await startStandIn(t, { answer: 'Fallback answer.' });
  const fallbacks: unknown[] = [];
  const onFallback = async (fallback: unknown) => {
    assert.equal(working.requests.length, 0, 'reported before the next provider is called');
    fallbacks.push(fallback);
  };
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1`, OLLAMA_BASE_URL: `${working.url}/v1` });
  await streamModelText(registry, { selection: {}, messages, onFallback });
  assert.equal(fallbacks.length, 1);
  const [fallback] = fallbacks as any[];
  assert.deepEqual([fallback.attempt, fallback.failed, fallback.next],
    [1, { provider: 'openai_compatible', model: 'local-small' }, { provider: 'ollama', model: 'ollama-small' }]);
  assert.match(fallback.error, /stand-in failure/);

  const alone = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1` });
  const none: unknown[] = [];
  await assert.rejects(streamModelText(alone, { selection: {}, messages, onFallback: async (item) => { none.push(item); } }));
  assert.deepEqual(none, [], 'nothing is tried after the last candidate');
});
