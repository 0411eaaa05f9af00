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
