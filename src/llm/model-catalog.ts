import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { ModelCatalogFile, modelTiers, providerKinds } from './model-catalog-schema.ts';
import { findCatalogProblems } from './catalog-problems.ts';

export type ModelTier = (typeof modelTiers)[number];
export type ProviderKind = (typeof providerKinds)[number];

export type ProviderSpec = {
  readonly name: string;
  readonly kind: ProviderKind;
  readonly apiKeyEnv?: string;
  readonly baseUrlEnv?: string;
  /** Requests and input tokens per minute the deployment allows (llm/provider-traffic.ts); no limit when absent. */
  readonly rpm?: number;
  readonly tpm?: number;
};

export type ModelPricing = {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
  /** Input tokens read from the prompt cache (the input price when the catalogue gives none). */
  readonly cachedInputPerMillion: number;
  /** Input tokens written to the prompt cache (Anthropic charges 1.25× input; the input price when none is given). */
  readonly cacheWritePerMillion: number;
};

export type CatalogModel = {
  readonly name: string;
  readonly provider: string;
  /** Sent to the provider unless `modelIdEnv` names a variable that is set. */
  readonly modelId: string;
  readonly modelIdEnv?: string;
  readonly tier: ModelTier;
  readonly priority: number;
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  /** Takes images in user messages. */
  readonly vision: boolean;
  readonly pricing: ModelPricing;
};

export type ModelCatalog = {
  readonly defaultTier: ModelTier;
  readonly providers: readonly ProviderSpec[];
  readonly models: readonly CatalogModel[];
};

/** Thrown at start-up; `problems` lists every issue found, each prefixed with its path. */
export class ModelCatalogError extends Error {
  readonly problems: readonly string[];

  constructor(source: string, problems: string[]) {
    super(`invalid model catalog ${source}:\n  ${problems.join('\n  ')}`);
    this.name = 'ModelCatalogError';
    this.problems = problems;
  }
}

export function loadModelCatalog(path: string): ModelCatalog {
  return parseModelCatalog(readFileSync(path, 'utf8'), path);
}

export function parseModelCatalog(yamlText: string, source = '(inline)'): ModelCatalog {
  const document = parseDocument(yamlText);
  if (document.errors.length > 0) {
    throw new ModelCatalogError(source, document.errors.map((error) => error.message));
  }
  const data: unknown = document.toJS();
  const problems = findCatalogProblems(data);
  if (problems.length > 0) throw new ModelCatalogError(source, problems);
  return toCatalog(data as ModelCatalogFile);
}

function toCatalog(file: ModelCatalogFile): ModelCatalog {
  const providers = Object.entries(file.providers).map(([name, entry]) => Object.freeze({
    name,
    kind: entry.kind,
    apiKeyEnv: entry.api_key_env,
    baseUrlEnv: entry.base_url_env,
    ...(entry.rpm === undefined ? {} : { rpm: entry.rpm }),
    ...(entry.tpm === undefined ? {} : { tpm: entry.tpm }),
  }));
  const models = file.models.map((entry) => Object.freeze({
    name: entry.name,
    provider: entry.provider,
    modelId: entry.model_id ?? entry.name,
    modelIdEnv: entry.model_id_env,
    tier: entry.tier,
    priority: entry.priority,
    contextWindow: entry.context_window,
    maxOutputTokens: entry.max_output_tokens,
    vision: entry.vision === true,
    pricing: Object.freeze({
      inputPerMillion: entry.pricing.input_per_million,
      outputPerMillion: entry.pricing.output_per_million,
      cachedInputPerMillion: entry.pricing.cached_input_per_million ?? entry.pricing.input_per_million,
      cacheWritePerMillion: entry.pricing.cache_write_per_million ?? entry.pricing.input_per_million,
    }),
  }));
  return Object.freeze({
    defaultTier: file.default_tier,
    providers: Object.freeze(providers),
    models: Object.freeze(models),
  });
}
