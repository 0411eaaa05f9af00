import type { ToolDefinition } from './registry.ts';

export const MAX_VALUES = 100_000;
/** Every value of a sample whose values are all distinct is a mode: the list is cut here. */
const MAX_MODES = 100;
const DEFAULT_PROBABILITIES = [0.25, 0.5, 0.75];

const MEASURES = ['mean', 'median', 'mode', 'stdev', 'variance', 'min', 'max', 'sum', 'count', 'quantiles'] as const;
type Measure = typeof MEASURES[number];

type MathJs = typeof import('mathjs');

/** How each measure is computed; stdev and variance are of a sample (divided by n - 1), as mathjs does by default. */
const COMPUTE: Record<Measure, (math: MathJs, values: number[], probabilities: number[]) => unknown> = {
  mean: (math, values) => math.mean(values),
  median: (math, values) => math.median(values),
  mode: (math, values) => math.mode(values).slice(0, MAX_MODES),
  stdev: (math, values) => math.std(values),
  variance: (math, values) => math.variance(values),
  min: (math, values) => math.min(values),
  max: (math, values) => math.max(values),
  sum: (math, values) => math.sum(values),
  count: (math, values) => math.count(values),
  quantiles: (math, values, probabilities) => quantiles(math, values, probabilities),
};

export const statisticsTool: ToolDefinition = {
  name: 'statistics',
  description: 'Descriptive statistics of a list of numbers: mean, median, mode (the most frequent values, at most '
    + `${MAX_MODES}), stdev and variance (of a sample), min, max, sum, count, and quantiles (quartiles unless `
    + '`probabilities` says otherwise). Returns an object with one entry per measure asked for (all by default).',
  parameters: {
    type: 'object',
    properties: {
      values: { type: 'array', items: { type: 'number' }, minItems: 1, maxItems: MAX_VALUES, description: 'The numbers' },
      measures: {
        type: 'array', items: { type: 'string', enum: [...MEASURES] }, minItems: 1, uniqueItems: true,
        description: 'The measures to compute; all of them when left out',
      },
      probabilities: {
        type: 'array', items: { type: 'number', minimum: 0, maximum: 1 }, minItems: 1, maxItems: 100,
        description: 'For `quantiles`: which ones, e.g. [0.1, 0.9] (default [0.25, 0.5, 0.75])',
      },
    },
    required: ['values'],
    additionalProperties: false,
  },
  category: 'math',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  execute: async (input) => describeValues(
    input.values as number[],
    (input.measures as Measure[] | undefined) ?? [...MEASURES],
    (input.probabilities as number[] | undefined) ?? DEFAULT_PROBABILITIES,
  ),
};

export async function describeValues(values: number[], measures: readonly Measure[], probabilities: number[]): Promise<Record<string, unknown>> {
  const math = await import('mathjs');
  return Object.fromEntries(measures.map((measure) => [measure, COMPUTE[measure](math, values, probabilities)]));
}

/** Keyed by probability, e.g. `{"0.25": 1.5, "0.5": 2, "0.75": 3}`. */
function quantiles(math: MathJs, values: number[], probabilities: number[]): Record<string, number> {
  const results = math.quantileSeq(values, probabilities) as number[];
  return Object.fromEntries(probabilities.map((probability, index) => [String(probability), results[index]]));
}
