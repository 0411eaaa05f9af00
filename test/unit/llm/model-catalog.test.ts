import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModelCatalog, ModelCatalogError, parseModelCatalog } from '../../../src/llm/model-catalog.ts';

const catalogPath = new URL('../../../config/models.yaml', import.meta.url).pathname;

const validYaml = `
default_tier: small
providers:
  local:
    kind: openai-compatible
    base_url_env: LOCAL_BASE_URL
  mock:
    kind: mock
models:
  - name: local-small
    provider: local
    model_id: served-model
    model_id_env: LOCAL_MODEL
    tier: small
    priority: 1
    context_window: 8192
    max_output_tokens: 1024
    pricing: { input_per_million: 0, output_per_million: 0 }
`;

function problemsOf(yamlText: string): readonly string[] {
  try {
    parseModelCatalog(yamlText);
  } catch (error) {
    assert.ok(error instanceof ModelCatalogError, String(error));
    return error.problems;
  }
  assert.fail('expected the catalog to be rejected');
}

test('the shipped config/models.yaml loads with every tier served by the mock', () => {
  const catalog = loadModelCatalog(catalogPath);
  assert.equal(catalog.defaultTier, 'small');
  assert.deepEqual(catalog.providers.map((provider) => provider.name),
    ['openai', 'anthropic', 'google', 'openai_compatible', 'ollama', 'mock']);
  const mockModels = catalog.models.filter((model) => model.provider === 'mock');
  assert.deepEqual(mockModels.map((model) => [model.name, model.tier, model.contextWindow]),
    [['mock-small', 'small', 8192], ['mock-medium', 'medium', 32768], ['mock-large', 'large', 131072]]);
  assert.ok(mockModels.every((model) => model.pricing.inputPerMillion > 0));
});

test('a valid catalog is converted to camelCase and frozen', () => {
  const catalog = parseModelCatalog(validYaml);
  assert.deepEqual(catalog.providers[0], {
    name: 'local', kind: 'openai-compatible', apiKeyEnv: undefined, baseUrlEnv: 'LOCAL_BASE_URL',
  });
  assert.equal(catalog.models[0].modelId, 'served-model');
  assert.equal(catalog.models[0].modelIdEnv, 'LOCAL_MODEL');
  assert.equal(catalog.models[0].pricing.outputPerMillion, 0);
  assert.ok(Object.isFrozen(catalog) && Object.isFrozen(catalog.models) && Object.isFrozen(catalog.models[0].pricing));
});

test('a model without model_id sends its name', () => {
  const catalog = parseModelCatalog(validYaml.replace('    model_id: served-model\n', ''));
  assert.equal(catalog.models[0].modelId, 'local-small');
});

test('schema problems are all reported, each with its path', () => {
  const problems = problemsOf(validYaml
    .replace('    tier: small', '    tier: huge')
    .replace('priority: 1', 'priority: 0')
    .replace('context_window: 8192', 'context_window: 8192\n    colour: blue')
    .replace('    max_output_tokens: 1024\n', ''));
  assert.deepEqual(problems.toSorted(), [
    '/models/0/colour: unknown field',
    '/models/0/max_output_tokens: is required',
    '/models/0/priority: must be >= 1',
    '/models/0/tier: must be one of small, medium, large',
  ]);
});

test('cross-reference problems name the provider, model and tier at fault', () => {
  const problems = problemsOf(`${validYaml}
  - name: local-small
    provider: nowhere
    tier: large
    priority: 1
    context_window: 8192
    max_output_tokens: 1024
    pricing: { input_per_million: 1, output_per_million: 1 }
`.replace('default_tier: small', 'default_tier: medium').replace('    base_url_env: LOCAL_BASE_URL\n', ''));
  assert.deepEqual(problems, [
    '/providers/local/base_url_env: is required for kind openai-compatible',
    '/models/1/provider: unknown provider "nowhere"',
    '/models/1/name: duplicate model "local-small"',
    '/default_tier: no model has tier medium',
  ]);
});

test('a provider of a hosted kind must name its API key variable', () => {
  const problems = problemsOf(validYaml.replace('kind: openai-compatible', 'kind: anthropic'));
  assert.deepEqual(problems, ['/providers/local/api_key_env: is required for kind anthropic']);
});

test('malformed YAML is reported with the source name', () => {
  assert.throws(() => parseModelCatalog('models: [unclosed', 'broken.yaml'),
    (error: Error) => error instanceof ModelCatalogError
      && error.message.startsWith('invalid model catalog broken.yaml'));
});

test('a cached-input price is read, defaults to the input price, and is refused when negative', () => {
  const withCached = validYaml.replace('pricing: { input_per_million: 0, output_per_million: 0 }', 'pricing: { input_per_million: 3, output_per_million: 15, cached_input_per_million: 0.3 }');
  assert.equal(parseModelCatalog(withCached).models[0].pricing.cachedInputPerMillion, 0.3);
  const withoutCached = validYaml.replace('input_per_million: 0,', 'input_per_million: 2,');
  assert.equal(parseModelCatalog(withoutCached).models[0].pricing.cachedInputPerMillion, 2);
  const negative = validYaml.replace('output_per_million: 0 }', 'output_per_million: 0, cached_input_per_million: -1 }');
  assert.ok(problemsOf(negative).some((problem) => problem.includes('cached_input_per_million')), JSON.stringify(problemsOf(negative)));
  const shipped = loadModelCatalog(catalogPath).models.find((model) => model.name === 'claude-haiku-4-5')!;
  assert.equal(shipped.pricing.cachedInputPerMillion, 0.1);
});

test('a cache-write price is read, defaults to the input price, and is refused when negative; Anthropic\'s is 1.25x input', () => {
  const withWrite = validYaml.replace('pricing: { input_per_million: 0, output_per_million: 0 }', 'pricing: { input_per_million: 3, output_per_million: 15, cache_write_per_million: 3.75 }');
  assert.equal(parseModelCatalog(withWrite).models[0].pricing.cacheWritePerMillion, 3.75);
  const withoutWrite = validYaml.replace('input_per_million: 0,', 'input_per_million: 2,');
  assert.equal(parseModelCatalog(withoutWrite).models[0].pricing.cacheWritePerMillion, 2);
  const negative = validYaml.replace('output_per_million: 0 }', 'output_per_million: 0, cache_write_per_million: -1 }');
  assert.ok(problemsOf(negative).some((problem) => problem.includes('cache_write_per_million')), JSON.stringify(problemsOf(negative)));
  for (const model of loadModelCatalog(catalogPath).models.filter((entry) => entry.provider === 'anthropic')) {
    assert.equal(model.pricing.cacheWritePerMillion, model.pricing.inputPerMillion * 1.25, model.name);
  }
});
