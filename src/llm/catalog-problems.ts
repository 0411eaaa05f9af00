import { Value } from 'typebox/value';
import type { TLocalizedValidationError } from 'typebox/error';
import { ModelCatalogFile } from './model-catalog-schema.ts';

/** Every problem in a parsed models.yaml, as "<path>: <what is wrong>"; empty when valid. */
export function findCatalogProblems(data: unknown): string[] {
  const schemaProblems = Value.Errors(ModelCatalogFile, data).flatMap(describeSchemaError);
  if (schemaProblems.length > 0) return [...new Set(schemaProblems)];
  // Cross-references are only checked on a well-shaped file, so they can trust its types.
  return findReferenceProblems(data as ModelCatalogFile);
}

function describeSchemaError(error: TLocalizedValidationError): string[] {
  const path = error.instancePath;
  switch (error.keyword) {
    case 'boolean':
      return []; // the matching additionalProperties error names the field
    case 'additionalProperties':
      return error.params.additionalProperties.map((name) => `${path}/${name}: unknown field`);
    case 'required':
      return error.params.requiredProperties.map((name) => `${path}/${name}: is required`);
    case 'enum':
      return [`${path || '/'}: must be one of ${error.params.allowedValues.join(', ')}`];
    default:
      return [`${path || '/'}: ${error.message}`];
  }
}

const kindsNeedingApiKey = new Set(['openai', 'anthropic', 'google']);

function findReferenceProblems(file: ModelCatalogFile): string[] {
  const problems: string[] = [];
  for (const [name, provider] of Object.entries(file.providers)) {
    if (kindsNeedingApiKey.has(provider.kind) && provider.api_key_env === undefined) {
      problems.push(`/providers/${name}/api_key_env: is required for kind ${provider.kind}`);
    }
    if (provider.kind === 'openai-compatible' && provider.base_url_env === undefined) {
      problems.push(`/providers/${name}/base_url_env: is required for kind openai-compatible`);
    }
  }
  const seenNames = new Set<string>();
  file.models.forEach((model, index) => {
    if (!Object.hasOwn(file.providers, model.provider)) {
      problems.push(`/models/${index}/provider: unknown provider "${model.provider}"`);
    }
    if (seenNames.has(model.name)) problems.push(`/models/${index}/name: duplicate model "${model.name}"`);
    seenNames.add(model.name);
  });
  if (!file.models.some((model) => model.tier === file.default_tier)) {
    problems.push(`/default_tier: no model has tier ${file.default_tier}`);
  }
  return problems;
}
