import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { loadModelCatalog } from '../../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../../src/llm/provider-registry.ts';
import { streamModelText } from '../../../src/llm/stream-model-text.ts';
import { DecompositionSchema, parseDecomposition } from '../../../src/workflows/planning/plan.ts';

const registry = createModelRegistry(loadModelCatalog(path.resolve(import.meta.dirname, '../../../config/models.yaml')), {});

test('a call with a response schema asks the model for JSON, and the mock plans the query in kind', async () => {
  const result = await streamModelText(registry, {
    selection: {}, messages: [{ role: 'user', content: 'Find the rivers. Find the mountains. Then compare them.' }],
    // A JSON answer is never cut at the token limit (it would not parse): the mock saw the JSON response format.
    maxOutputTokens: 3, responseSchema: DecompositionSchema as JSONSchema7, mockOptions: { purpose: 'decomposition' },
  });
  const plan = parseDecomposition(JSON.parse(result.text));
  assert.notEqual(typeof plan, 'string', String(plan));
  if (typeof plan === 'string') return;
  assert.deepEqual(plan.subtasks.map((subtask) => [subtask.id, subtask.dependencies]), [['task-1', []], ['task-2', []], ['task-3', ['task-2']]]);
  assert.equal(plan.executionStrategy, 'hybrid');
});

test('plans that do not fit are refused with the reason', () => {
  assert.match(String(parseDecomposition({ complexity_score: 2, subtasks: [] })), /does not fit the schema/);
  assert.match(String(parseDecomposition({ complexity_score: 0.5, subtasks: [] })), /no subtasks/);
  assert.match(String(parseDecomposition({ complexity_score: 0.5, subtasks: [{ id: 'a', description: 'x' }, { id: 'a', description: 'y' }] })), /repeats a subtask id/);
  assert.match(String(parseDecomposition({ complexity_score: 0.5, subtasks: [{ id: 'a', description: 'x', dependencies: ['b'] }] })), /depends on b, which is not in the plan/);
});
