import { badRequest, serviceUnavailable } from '../errors.ts';
import type { CatalogModel, ModelCatalog, ModelTier, ProviderSpec } from './model-catalog.ts';
import { modelTiers } from './model-catalog-schema.ts';

export type ModelSelection = {
  modelTier?: string;
  modelOverride?: string;
  providerOverride?: string;
};

/** The environment variable to set before `provider` can be called; undefined when it can. */
export type FindMissingCredential = (provider: ProviderSpec) => string | undefined;

/**
 * The models to try, in order: model_override alone; else provider_override's models in the tier
 * (no other provider); else the tier's models from every configured real provider by priority.
 * The mock provider serves only when no real provider is configured or when named explicitly.
 */
export function selectModels(
  catalog: ModelCatalog,
  findMissingCredential: FindMissingCredential,
  selection: ModelSelection,
): CatalogModel[] {
  const tier = parseTier(selection.modelTier ?? catalog.defaultTier);
  const overriddenProvider = selection.providerOverride === undefined
    ? undefined : findProvider(catalog, selection.providerOverride);
  if (selection.modelOverride !== undefined) {
    const model = catalog.models.find((candidate) => candidate.name === selection.modelOverride);
    if (model === undefined) throw badRequest(`unknown model: ${selection.modelOverride}`);
    requireConfigured(findProvider(catalog, model.provider), findMissingCredential);
    return [model];
  }
  if (overriddenProvider !== undefined) {
    requireConfigured(overriddenProvider, findMissingCredential);
    const models = modelsOf(catalog, tier, [overriddenProvider.name]);
    if (models.length === 0) throw badRequest(`provider ${overriddenProvider.name} has no ${tier} model`);
    return models;
  }
  const configured = catalog.providers.filter((provider) => findMissingCredential(provider) === undefined);
  const real = configured.filter((provider) => provider.kind !== 'mock');
  const serving = real.length > 0 ? real : configured;
  const models = modelsOf(catalog, tier, serving.map((provider) => provider.name));
  if (models.length === 0) throw serviceUnavailable(`no configured model provider offers a ${tier} model`);
  return models;
}

function parseTier(tier: string): ModelTier {
  const known = modelTiers.find((candidate) => candidate === tier);
  if (known === undefined) throw badRequest(`unknown model tier: ${tier} (expected ${modelTiers.join(', ')})`);
  return known;
}

function findProvider(catalog: ModelCatalog, name: string): ProviderSpec {
  const provider = catalog.providers.find((candidate) => candidate.name === name);
  if (provider === undefined) throw badRequest(`unknown provider: ${name}`);
  return provider;
}

function requireConfigured(provider: ProviderSpec, findMissingCredential: FindMissingCredential): void {
  const missing = findMissingCredential(provider);
  if (missing !== undefined) throw badRequest(`provider ${provider.name} is not configured: set ${missing}`);
}

function modelsOf(catalog: ModelCatalog, tier: ModelTier, providerNames: string[]): CatalogModel[] {
  return catalog.models
    .filter((model) => model.tier === tier && providerNames.includes(model.provider))
    .toSorted((left, right) => left.priority - right.priority);
}
