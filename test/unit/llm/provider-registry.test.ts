import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAppError } from '../../../src/errors.ts';
import { loadModelCatalog } from '../../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../../src/llm/provider-registry.ts';
import type { ModelSelection } from '../../../src/llm/select-models.ts';

const catalog = loadModelCatalog(new URL('../../../config/models.yaml', import.meta.url).pathname);

function candidateNames(env: Record<string, string>, selection: ModelSelection = {}): string[] {
  const candidates = createModelRegistry(catalog, env).resolveCandidates(selection);
  return candidates.map((candidate) => candidate.catalogModel.name);
}

function assertBadRequest(action: () => unknown, message: string) {
  assert.throws(action, (error) => isAppError(error) && error.statusCode === 400 && error.message === message);
}

test('with no provider configured, the registry is mock-only and says which variables to set', () => {
  const registry = createModelRegistry(catalog, {});
  assert.equal(registry.isMockOnly(), true);
  assert.deepEqual(registry.configuredProviders(), ['mock']);
  assert.equal(registry.describe(), 'no model provider configured: tasks use the built-in mock provider (set '
    + 'OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, OPENAI_COMPATIBLE_BASE_URL or OLLAMA_BASE_URL '
    + 'to use a real one)');
  assert.deepEqual(candidateNames({}), ['mock-small']);
  assert.deepEqual(candidateNames({}, { modelTier: 'large' }), ['mock-large']);
});

test('configured real providers are tried in tier priority order, without the mock', () => {
  const env = { GOOGLE_GENERATIVE_AI_API_KEY: 'g', OPENAI_API_KEY: 'o', OLLAMA_BASE_URL: 'http://127.0.0.1:1/v1' };
  const registry = createModelRegistry(catalog, env);
  assert.equal(registry.isMockOnly(), false);
  assert.deepEqual(registry.configuredProviders(), ['openai', 'google', 'ollama', 'mock']);
  assert.deepEqual(candidateNames(env, { modelTier: 'medium' }),
    ['gpt-5-mini', 'gemini-2.5-flash', 'ollama-medium']);
  assert.equal(registry.describe(),
    'model providers configured: openai, google, ollama; small tasks start with gpt-5-nano (openai)');
});

test('candidates carry AI SDK models for their provider and wire model id', () => {
  const env = {
    OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_COMPATIBLE_MODEL: 'qwen-7b', ANTHROPIC_API_KEY: 'a',
  };
  const [first, second] = createModelRegistry(catalog, env).resolveCandidates({});
  assert.equal(first.languageModel.modelId, 'claude-haiku-4-5');
  assert.equal(first.languageModel.specificationVersion, 'v3');
  assert.equal(second.catalogModel.name, 'local-small');
  assert.equal(second.languageModel.modelId, 'qwen-7b');
  assert.equal(createModelRegistry(catalog, {}).resolveCandidates({})[0].languageModel.provider, 'mock');
});

test('provider_override keeps to that provider within the tier', () => {
  const env = { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' };
  assert.deepEqual(candidateNames(env, { providerOverride: 'anthropic', modelTier: 'large' }), ['claude-opus-4-5']);
  assert.deepEqual(candidateNames(env, { providerOverride: 'mock' }), ['mock-small']);
});

test('model_override wins over provider_override and tier, and may name the mock', () => {
  const env = { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' };
  const selection = { modelOverride: 'gpt-5', providerOverride: 'anthropic', modelTier: 'small' };
  assert.deepEqual(candidateNames(env, selection), ['gpt-5']);
  assert.deepEqual(candidateNames(env, { modelOverride: 'mock-medium' }), ['mock-medium']);
});

test('unknown names and unconfigured providers are bad requests naming what to fix', () => {
  const registry = createModelRegistry(catalog, { OPENAI_API_KEY: 'o' });
  assertBadRequest(() => registry.resolveCandidates({ modelOverride: 'gpt-9' }), 'unknown model: gpt-9');
  assertBadRequest(() => registry.resolveCandidates({ providerOverride: 'acme' }), 'unknown provider: acme');
  assertBadRequest(() => registry.resolveCandidates({ modelTier: 'huge' }),
    'unknown model tier: huge (expected small, medium, large)');
  assertBadRequest(() => registry.resolveCandidates({ providerOverride: 'anthropic' }),
    'provider anthropic is not configured: set ANTHROPIC_API_KEY');
  assertBadRequest(() => registry.resolveCandidates({ modelOverride: 'local-large' }),
    'provider openai_compatible is not configured: set OPENAI_COMPATIBLE_BASE_URL');
});

test('empty credential variables count as unset', () => {
  assert.equal(createModelRegistry(catalog, { OPENAI_API_KEY: '' }).isMockOnly(), true);
});
