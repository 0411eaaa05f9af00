import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILT_IN_TOOLS, createBuiltInToolRegistry } from '../../../src/tools/built-ins.ts';
import { MAX_VALUES, statisticsTool } from '../../../src/tools/statistics.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';

const context = offlineToolContext();
const registry = createBuiltInToolRegistry();

test('every measure of a small sample, with sample stdev and variance and quartiles', async () => {
  const { output } = await registry.invoke('statistics', { values: [1, 2, 2, 3, 4] }, context);
  assert.deepEqual(output, {
    mean: 2.4, median: 2, mode: [2], stdev: Math.sqrt(1.3), variance: 1.3, min: 1, max: 4, sum: 12, count: 5,
    quantiles: { '0.25': 2, '0.5': 2, '0.75': 3 },
  });
});

test('only the measures asked for, and the quantiles asked for', async () => {
  const { output } = await registry.invoke('statistics', { values: [10, 20, 30, 40], measures: ['median', 'quantiles'], probabilities: [0, 1] }, context);
  assert.deepEqual(output, { median: 25, quantiles: { '0': 10, '1': 40 } });
});

test('a tie gives every mode; all-distinct values give at most 100 of them', async () => {
  assert.deepEqual((await registry.invoke('statistics', { values: [3, 1, 3, 1], measures: ['mode'] }, context)).output, { mode: [3, 1] });
  const distinct = Array.from({ length: 1000 }, (_, index) => index);
  const { output } = await registry.invoke('statistics', { values: distinct, measures: ['mode', 'count'] }, context) as { output: { mode: number[]; count: number } };
  assert.equal(output.mode.length, 100);
  assert.equal(output.count, 1000);
});

test('bad inputs are refused by the schema: no values, too many, not numbers, an unknown measure', async () => {
  const refusals: Array<[unknown, RegExp]> = [
    [{ values: [] }, /input\/values must NOT have fewer than 1 items/],
    [{ values: new Array(MAX_VALUES + 1).fill(1) }, /must NOT have more than 100000 items/],
    [{ values: [1, '2'] }, /input\/values\/1 must be number/],
    [{ values: [1], measures: ['kurtosis'] }, /input\/measures\/0 must be equal to one of the allowed values/],
    [{ values: [1], probabilities: [1.5] }, /input\/probabilities\/0 must be <= 1/],
  ];
  for (const [input, expected] of refusals) assert.match((await registry.invoke('statistics', input, context)).error!, expected);
});

test('statistics is a built-in math tool, free and not dangerous', () => {
  assert.ok(BUILT_IN_TOOLS.includes(statisticsTool));
  assert.deepEqual([statisticsTool.category, statisticsTool.costPerUseUsd, statisticsTool.dangerous], ['math', 0, false]);
});
