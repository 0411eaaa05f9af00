import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText } from 'ai';
import { loadModelCatalog } from '../../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../../src/llm/provider-registry.ts';
import { start } from '../../fixtures/openai-stand-in.ts';

const catalog = loadModelCatalog(new URL('../../../config/models.yaml', import.meta.url).pathname);

test('a non-streaming call to an OpenAI-compatible server reads its answer and usage', async (t) => {
  const standIn = await start({ answer: 'Plain answer.', usage: { promptTokens: 20, completionTokens: 3 } });
  t.after(() => standIn.close());
  const registry = createModelRegistry(catalog, { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1` });
  const [candidate] = registry.resolveCandidates({ providerOverride: 'openai_compatible' });
  const result = await generateText({ model: candidate.languageModel, prompt: 'Hi', maxRetries: 0 });
  assert.equal(result.text, 'Plain answer.');
  assert.deepEqual([result.usage.inputTokens, result.usage.outputTokens], [20, 3]);
  assert.notEqual(standIn.requests[0].body.stream, true);
  assert.equal(standIn.requests[0].body.model, 'local-model');
});
