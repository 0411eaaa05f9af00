import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costUsd } from '../../../src/llm/cost.ts';

const pricing = (inputPerMillion: number, outputPerMillion: number) =>
  ({ pricing: { inputPerMillion, outputPerMillion } });

test('cost charges input and output tokens at their own per-million prices', () => {
  assert.equal(costUsd(pricing(1, 2), 1_000_000, 0), 1);
  assert.equal(costUsd(pricing(1, 2), 0, 1_000_000), 2);
  assert.equal(costUsd(pricing(4, 8), 250_000, 500_000), 5);
});

test('cost of a small call is a fraction of a cent', () => {
  assert.equal(costUsd(pricing(1, 2), 100, 50), 0.0002);
});

test('a model with zero pricing costs nothing', () => {
  assert.equal(costUsd(pricing(0, 0), 123_456, 7_890), 0);
});

test('input tokens read from the prompt cache are charged at the cached-input price', () => {
  const cachedAtTenth = { pricing: { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3 } };
  // 1M input of which 800k cached: 200k at 3 + 800k at 0.3 = 0.6 + 0.24; 100k output at 15 = 1.5.
  assert.equal(Math.round(costUsd(cachedAtTenth, 1_000_000, 100_000, 800_000) * 1e6) / 1e6, 2.34);
  assert.equal(costUsd(cachedAtTenth, 1_000_000, 0, 0), 3, 'nothing cached: the input price');
  assert.equal(costUsd(cachedAtTenth, 1_000_000, 0, 5_000_000), 0.3, 'never more cached tokens than input tokens');
  assert.equal(costUsd(pricing(3, 15), 1_000_000, 0, 800_000), 3, 'no cached-input price: cached tokens at the input price');
});

test('input tokens written to the prompt cache are charged at the cache-write price, the input price without one', () => {
  const anthropic = { pricing: { inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3, cacheWritePerMillion: 3.75 } };
  // 1M input: 500k read at 0.3, 400k written at 3.75, 100k neither at 3 = 0.15 + 1.5 + 0.3.
  assert.equal(Math.round(costUsd(anthropic, 1_000_000, 0, 500_000, 400_000) * 1e6) / 1e6, 1.95);
  assert.equal(costUsd(anthropic, 1_000_000, 0, 0, 2_000_000), 3.75, 'never more written tokens than input tokens');
  assert.equal(Math.round(costUsd(anthropic, 1_000_000, 0, 800_000, 800_000) * 1e6) / 1e6, 0.99, 'read and written never more than the input: 800k at 0.3, 200k at 3.75');
  assert.equal(costUsd(pricing(3, 15), 1_000_000, 0, 0, 1_000_000), 3, 'no cache-write price: written tokens at the input price');
});
