import type { ModelPricing } from './model-catalog.ts';

type Pricing = Pick<ModelPricing, 'inputPerMillion' | 'outputPerMillion'> & Partial<Pick<ModelPricing, 'cachedInputPerMillion' | 'cacheWritePerMillion'>>;

/**
 * USD cost of one call at the model's list prices (per million tokens). `inputTokens` counts every input token, as
 * the AI SDK reports them: the ones read from the provider's prompt cache (`cachedInputTokens`) are charged at the
 * cached-input price, the ones written to it (`cacheWriteTokens`, Anthropic's cache_creation_input_tokens) at the
 * cache-write price, the rest at the input price.
 */
export function costUsd(
  model: { readonly pricing: Pricing },
  inputTokens: number,
  outputTokens: number,
  cachedInputTokens = 0,
  cacheWriteTokens = 0,
): number {
  const { inputPerMillion, outputPerMillion, cachedInputPerMillion = inputPerMillion, cacheWritePerMillion = inputPerMillion } = model.pricing;
  const cached = Math.min(Math.max(cachedInputTokens, 0), inputTokens);
  const written = Math.min(Math.max(cacheWriteTokens, 0), inputTokens - cached);
  const uncached = inputTokens - cached - written;
  return (uncached * inputPerMillion + cached * cachedInputPerMillion + written * cacheWritePerMillion + outputTokens * outputPerMillion) / 1_000_000;
}

/** Costs are reported to 8 decimal places (a hundred-millionth of a dollar). */
export const roundUsd = (value: number) => Math.round(value * 1e8) / 1e8;
