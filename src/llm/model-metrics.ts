import type { CatalogModel } from './model-catalog.ts';
import { modelCost, modelRequestDuration, modelRequests, modelTokens } from '../observability/metrics.ts';

export type ModelRequestOutcome = 'ok' | 'error' | 'aborted';

/** Counts one request to a provider (a candidate tried), with its tokens and cost when it answered. */
export function countModelRequest(
  model: Pick<CatalogModel, 'provider' | 'name'>, outcome: ModelRequestOutcome, startedAt: number,
  usage?: { inputTokens: number; outputTokens: number; costUsd: number; cachedInputTokens?: number; cacheWriteTokens?: number },
): void {
  const labels = { provider: model.provider, model: model.name };
  modelRequests.inc({ ...labels, outcome });
  modelRequestDuration.observe(labels, (performance.now() - startedAt) / 1000);
  if (!usage) return;
  modelTokens.inc({ ...labels, type: 'input' }, usage.inputTokens);
  modelTokens.inc({ ...labels, type: 'output' }, usage.outputTokens);
  // A part of the input above, not added to it: the tokens read from the prompt cache, at the cached-input price.
  if (usage.cachedInputTokens) modelTokens.inc({ ...labels, type: 'cached_input' }, usage.cachedInputTokens);
  // Likewise a part of the input: the tokens written to the prompt cache, at the cache-write price.
  if (usage.cacheWriteTokens) modelTokens.inc({ ...labels, type: 'cache_write' }, usage.cacheWriteTokens);
  modelCost.inc(labels, usage.costUsd);
}
