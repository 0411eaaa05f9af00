import type { ModelPricing } from './model-catalog.ts';

/**
 * USD cost of one call at the model's list prices (per million tokens). `inputTokens` counts every input token, the
 * ones read from the provider's prompt cache (`cachedInputTokens`) included, as the AI SDK reports them; those are
 * charged at the cached-input price instead of the input price.
 */
export function costUsd(
  model: { readonly pricing: Pick<ModelPricing, 'inputPerMillion' | 'outputPerMillion'> & Partial<Pick<ModelPricing, 'cachedInputPerMillion'>> },
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens = 0,
): number {
  const { inputPerMillion, outputPerMillion, cachedInputPerMillion = inputPerMillion } = model.pricing;
  const cached = Math.min(Math.max(cachedInputTokens, 0), inputTokens);
  return ((inputTokens - cached) * inputPerMillion + cached * cachedInputPerMillion + outputTokens * outputPerMillion) / 1_000_000;
}

/** Costs are reported to 8 decimal places (a hundred-millionth of a dollar). */
export const roundUsd = (value: number) => Math.round(value * 1e8) / 1e8;
