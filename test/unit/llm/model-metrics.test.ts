import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countModelRequest } from '../../../src/llm/model-metrics.ts';
import { modelCost, modelTokens } from '../../../src/observability/metrics.ts';

const valueOf = async (counter: typeof modelTokens | typeof modelCost, labels: Record<string, string>) =>
  (await counter.get()).values.find((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key as never] === value))?.value ?? 0;

test('cached input tokens are counted as their own token type, a part of the input, with the cost as given', async () => {
  const model = { provider: 'anthropic', name: 'cached-metrics-model' };
  countModelRequest(model, 'ok', performance.now(), { inputTokens: 1000, outputTokens: 10, cachedInputTokens: 800, costUsd: 0.5 });
  countModelRequest(model, 'ok', performance.now(), { inputTokens: 100, outputTokens: 10, costUsd: 0.25 });
  const labels = { provider: 'anthropic', model: 'cached-metrics-model' };
  assert.equal(await valueOf(modelTokens, { ...labels, type: 'input' }), 1100);
  assert.equal(await valueOf(modelTokens, { ...labels, type: 'cached_input' }), 800);
  assert.equal(await valueOf(modelCost, labels), 0.75);
});

test('cache-write tokens are counted as their own token type, a part of the input', async () => {
  const model = { provider: 'anthropic', name: 'cache-write-metrics-model' };
  countModelRequest(model, 'ok', performance.now(), { inputTokens: 1000, outputTokens: 10, cachedInputTokens: 300, cacheWriteTokens: 600, costUsd: 0.5 });
  const labels = { provider: 'anthropic', model: 'cache-write-metrics-model' };
  assert.equal(await valueOf(modelTokens, { ...labels, type: 'input' }), 1000);
  assert.equal(await valueOf(modelTokens, { ...labels, type: 'cache_write' }), 600);
  assert.equal(await valueOf(modelTokens, { ...labels, type: 'cached_input' }), 300);
});
