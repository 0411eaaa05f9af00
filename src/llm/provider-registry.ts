import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { CatalogModel, ModelCatalog, ProviderKind, ProviderSpec } from './model-catalog.ts';
import type { MockSettings } from './mock-provider.ts';
import { createModelFactory, credentialEnv, type LanguageModelFactory } from './provider-factory.ts';
import { createProviderTraffic, type ProviderTraffic } from './provider-traffic.ts';
import { selectModels, type ModelSelection } from './select-models.ts';

/** `providerKind`: the wire format the call speaks (Anthropic's takes cache breakpoints). */
export type ModelCandidate = { catalogModel: CatalogModel; languageModel: LanguageModelV3; providerKind: ProviderKind };

export type ModelRegistry = {
  readonly catalog: ModelCatalog;
  /** The deployments' shared limits and cooldowns. */
  readonly traffic: ProviderTraffic;
  /** Names of the providers that can be called, the mock included. */
  configuredProviders(): string[];
  /** True when no real provider is configured, so tasks use the mock. */
  isMockOnly(): boolean;
  /** One line for start-up logs and /readiness: which provider tasks will use. */
  describe(): string;
  /** The models to try for a call, in fallback order; throws badRequest for unusable overrides. */
  resolveCandidates(selection: ModelSelection): ModelCandidate[];
};

/** Builds an AI SDK provider instance for every provider in `catalog` whose credential is set. */
export function createModelRegistry(
  catalog: ModelCatalog,
  env: Record<string, string | undefined>,
  mock: MockSettings = {},
  traffic: ProviderTraffic = createProviderTraffic(undefined, catalog.providers, DEFAULT_TRAFFIC),
): ModelRegistry {
  const factories = new Map<string, LanguageModelFactory>();
  const kinds = new Map(catalog.providers.map((provider) => [provider.name, provider.kind]));
  for (const provider of catalog.providers) {
    const factory = createModelFactory(provider, env, mock);
    if (factory !== undefined) factories.set(provider.name, factory);
  }
  const findMissingCredential = (provider: ProviderSpec) =>
    factories.has(provider.name) ? undefined : credentialEnv(provider);
  const realProviders = catalog.providers
    .filter((provider) => provider.kind !== 'mock' && factories.has(provider.name))
    .map((provider) => provider.name);

  const selectDefault = () => selectModels(catalog, findMissingCredential, {});
  const resolveCandidates = (selection: ModelSelection): ModelCandidate[] =>
    selectModels(catalog, findMissingCredential, selection).map((catalogModel) => ({
      catalogModel,
      languageModel: factories.get(catalogModel.provider)!(wireModelId(catalogModel, env)),
      providerKind: kinds.get(catalogModel.provider)!,
    }));

  return Object.freeze({
    catalog,
    traffic,
    configuredProviders: () => [...factories.keys()],
    isMockOnly: () => realProviders.length === 0,
    describe: () => describeRegistry(catalog, realProviders, selectDefault),
    resolveCandidates,
  });
}

/** Without a database (unit tests): no shared limits, the retry and cooldown defaults. */
export const DEFAULT_TRAFFIC = Object.freeze({ windowMs: 60_000, tenantShare: 1, maxWaitMs: 120_000, parkAfterMs: 3_000, cooldownFailures: 3, cooldownMs: 30_000, retries: 4, stallMs: 300_000, outageWaitMs: 0 });

function wireModelId(model: CatalogModel, env: Record<string, string | undefined>): string {
  return (model.modelIdEnv === undefined ? undefined : env[model.modelIdEnv]) || model.modelId;
}

function describeRegistry(
  catalog: ModelCatalog,
  realProviders: string[],
  selectDefault: () => CatalogModel[],
): string {
  if (realProviders.length === 0) {
    const variables = catalog.providers.map(credentialEnv).filter((name) => name !== undefined);
    return 'no model provider configured: tasks use the built-in mock provider '
      + `(set ${joinAlternatives(variables)} to use a real one)`;
  }
  const configured = `model providers configured: ${realProviders.join(', ')}`;
  try {
    const first = selectDefault()[0];
    return `${configured}; ${catalog.defaultTier} tasks start with ${first.name} (${first.provider})`;
  } catch (error) {
    return `${configured}; ${(error as Error).message}`;
  }
}

function joinAlternatives(names: string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}
