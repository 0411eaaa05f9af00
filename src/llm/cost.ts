import type { ModelPricing } from './model-catalog.ts';

/** USD cost of one call at the model's list prices (per million tokens). */
export function costUsd(
  model: { readonly pricing: ModelPricing },
  inputTokens: number,
  outputTokens: number,
): number {
  const { inputPerMillion, outputPerMillion } = model.pricing;
  return (inputTokens * inputPerMillion + outputTokens * outputPerMillion) / 1_000_000;
}

/** Costs are reported to 8 decimal places (a hundred-millionth of a dollar). */
export const roundUsd = (value: number) => Math.round(value * 1e8) / 1e8;
