import { Type, type Static } from 'typebox';

/** The shape of config/models.yaml as written (snake_case); model-catalog.ts converts it. */

export const modelTiers = ['small', 'medium', 'large'] as const;
export const providerKinds = ['openai', 'anthropic', 'google', 'openai-compatible', 'mock'] as const;

const Name = Type.String({ minLength: 1 });
const EnvName = Type.String({ pattern: '^[A-Z][A-Z0-9_]*$' });
const TokenCount = Type.Integer({ minimum: 1 });
const Price = Type.Number({ minimum: 0 });

const ProviderEntry = Type.Object({
  kind: Type.Enum([...providerKinds]),
  api_key_env: Type.Optional(EnvName),
  base_url_env: Type.Optional(EnvName),
  /** Requests and tokens (input) per minute this deployment allows, shared by every process. */
  rpm: Type.Optional(Type.Integer({ minimum: 1 })),
  tpm: Type.Optional(Type.Integer({ minimum: 1 })),
}, { additionalProperties: false });

const ModelEntry = Type.Object({
  name: Name,
  provider: Name,
  model_id: Type.Optional(Name),
  model_id_env: Type.Optional(EnvName),
  tier: Type.Enum([...modelTiers]),
  priority: Type.Integer({ minimum: 1 }),
  context_window: TokenCount,
  max_output_tokens: TokenCount,
  vision: Type.Optional(Type.Boolean()),
  pricing: Type.Object({
    input_per_million: Price,
    output_per_million: Price,
    /** Input tokens read from the provider's prompt cache; absent: charged at input_per_million. */
    cached_input_per_million: Type.Optional(Price),
    /** Input tokens written to the provider's prompt cache (Anthropic's cache_creation_input_tokens); absent: input_per_million. */
    cache_write_per_million: Type.Optional(Price),
  }, { additionalProperties: false }),
}, { additionalProperties: false });

export const ModelCatalogFile = Type.Object({
  default_tier: Type.Enum([...modelTiers]),
  providers: Type.Record(Type.String(), ProviderEntry),
  models: Type.Array(ModelEntry, { minItems: 1 }),
}, { additionalProperties: false });

export type ModelCatalogFile = Static<typeof ModelCatalogFile>;
