import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { loadModelCatalog } from '../../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../../src/llm/provider-registry.ts';
import { streamModelText, type ModelToolSpec } from '../../../src/llm/stream-model-text.ts';
import { start, type AnthropicStandInOptions } from '../../fixtures/anthropic-stand-in.ts';
import { start as startOpenAi } from '../../fixtures/openai-stand-in.ts';

const catalog = loadModelCatalog(new URL('../../../config/models.yaml', import.meta.url).pathname);
const haiku = catalog.models.find((model) => model.name === 'claude-haiku-4-5')!;
const system = 'You are a careful agent. '.repeat(40);
const tools: ModelToolSpec[] = ['lookup', 'calculator'].map((name) => ({
  name, description: `The ${name} tool, described at some length. `.repeat(10), parameters: { type: 'object', properties: { q: { type: 'string' } } },
}));

async function anthropic(t: TestContext, options: AnthropicStandInOptions = {}) {
  const standIn = await start(options);
  t.after(() => standIn.close());
  const registry = createModelRegistry(catalog, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: `${standIn.url}/v1` });
  return { standIn, registry };
}

const selection = { modelOverride: 'claude-haiku-4-5' };

/** An agent loop's two turns: the question, then the question, the tool call and its result. */
const firstTurn: ModelMessage[] = [{ role: 'user', content: 'What is 6 times 7?' }];
const secondTurn: ModelMessage[] = [
  ...firstTurn,
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'toolu_1', toolName: 'calculator', input: { q: '6*7' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'calculator', output: { type: 'json', value: 42 } }] },
];

test('an agent loop\'s call to Anthropic marks the last tool, the system prompt and the last message; the next turn reads them from the cache', async (t) => {
  const { standIn, registry } = await anthropic(t, { answer: 'It is 42.' });
  const first = await streamModelText(registry, { selection, system, messages: firstTurn, tools });
  const [request] = standIn.requests;
  assert.equal(request.path, '/v1/messages');
  assert.deepEqual(request.body.tools.map((tool: any) => tool.cache_control), [undefined, { type: 'ephemeral' }]);
  assert.deepEqual(request.body.system, [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }]);
  assert.deepEqual(request.body.messages.at(-1).content.at(-1).cache_control, { type: 'ephemeral' });
  assert.equal(first.cachedInputTokens, 0, 'nothing was cached before the first turn');
  assert.ok(first.cacheWriteTokens > 0 && first.cacheWriteTokens === first.inputTokens, `the whole first prompt was written: ${JSON.stringify(first)}`);

  const second = await streamModelText(registry, { selection, system, messages: secondTurn, tools });
  const marked = standIn.requests[1].body.messages.map((message: any) => message.content.some((block: any) => block.cache_control !== undefined));
  assert.deepEqual(marked, [false, false, true], 'only the newest message carries the breakpoint');
  assert.equal(second.cachedInputTokens, first.cacheWriteTokens, 'the second turn read the whole first prompt');
  assert.equal(second.cacheWriteTokens, second.inputTokens - second.cachedInputTokens, 'and wrote only what is new');
  const expected = ((second.inputTokens - second.cachedInputTokens - second.cacheWriteTokens) * 1 + second.cachedInputTokens * 0.1 + second.cacheWriteTokens * 1.25 + second.outputTokens * 5) / 1e6;
  assert.ok(Math.abs(second.costUsd - expected) < 1e-12, `cost ${second.costUsd}, expected ${expected}`);
  assert.equal(haiku.pricing.cacheWritePerMillion, 1.25);
});

test('a one-off call to Anthropic (no tools, one message) carries no breakpoint and writes nothing', async (t) => {
  const { standIn, registry } = await anthropic(t);
  const result = await streamModelText(registry, { selection, system, messages: firstTurn });
  assert.doesNotMatch(JSON.stringify(standIn.requests[0].body), /cache_control/);
  assert.deepEqual([result.cachedInputTokens, result.cacheWriteTokens], [0, 0]);
});

test('other providers\' requests carry no cache markers', async (t) => {
  const standIn = await startOpenAi();
  t.after(() => standIn.close());
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1` });
  await streamModelText(registry, { selection: { modelTier: 'medium' }, system, messages: secondTurn, tools });
  assert.doesNotMatch(JSON.stringify(standIn.requests[0].body), /cache_control|cacheControl|ephemeral/);
});

test('the Anthropic stand-in\'s 529 overloaded_error and 429 with Retry-After are retried, and a cut stream restarted', async (t) => {
  const { standIn, registry } = await anthropic(t, {
    answer: 'One two three four five.',
    wordDelayMs: 5,
    script: (index) => [
      { status: 529, message: 'Overloaded', type: 'overloaded_error' },
      { status: 429, message: 'Slow down', type: 'rate_limit_error', retryAfterMs: 300 },
      { breakAfterWords: 2 },
    ][index],
  });
  const deltas: string[] = [];
  const result = await streamModelText(registry, { selection, system, messages: firstTurn, onDelta: (delta) => deltas.push(delta) });
  assert.equal(result.text, 'One two three four five.');
  assert.equal(deltas.join(''), result.text, 'the restart delivered no word twice');
  assert.deepEqual(standIn.requests.map((request) => request.status), [529, 429, 200, 200]);
  assert.ok(standIn.requests[2].at - standIn.requests[1].at >= 295, `came back after ${standIn.requests[2].at - standIn.requests[1].at} ms, asked 300`);
});

test('the Anthropic stand-in enforces its requests per window with 429 and Retry-After, and answers without streaming too', async (t) => {
  const standIn = await start({ rateLimit: { requests: 1, windowMs: 60_000 }, answer: 'Plain.' });
  t.after(() => standIn.close());
  const send = () => fetch(`${standIn.url}/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const first = await send();
  assert.equal(first.status, 200);
  const body = await first.json();
  assert.deepEqual(body.content, [{ type: 'text', text: 'Plain.' }]);
  assert.deepEqual(Object.keys(body.usage).sort(), ['cache_creation_input_tokens', 'cache_read_input_tokens', 'input_tokens', 'output_tokens']);
  const refused = await send();
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.deepEqual((await refused.json()).error.type, 'rate_limit_error');
  assert.equal(standIn.stats.rateLimited, 1);
});
