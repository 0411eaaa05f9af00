import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { loadModelCatalog } from '../../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../../src/llm/provider-registry.ts';
import { streamModelText, type ModelToolSpec } from '../../../src/llm/stream-model-text.ts';

const catalog = loadModelCatalog(new URL('../../../config/models.yaml', import.meta.url).pathname);
const registry = createModelRegistry(catalog, {});
const calculator: ModelToolSpec = {
  name: 'calculator', description: 'Evaluates arithmetic',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
};
const question: ModelMessage[] = [{ role: 'user', content: 'What is 2*(3+4)?' }];
const script = (toolCalls: unknown[]) => ({ toolCalls });

test('the tool calls the model asks for come back with the text and usage, and the SDK runs none of them', async () => {
  const result = await streamModelText(registry, {
    selection: {}, messages: question, tools: [calculator], mockOptions: script([{ tool: 'calculator', args: { expression: '2*(3+4)' } }]),
  });
  assert.equal(result.text, '');
  assert.deepEqual(result.toolCalls, [{ toolCallId: 'mock-call-1-1', toolName: 'calculator', input: { expression: '2*(3+4)' } }]);
  assert.ok(result.inputTokens > 0 && result.outputTokens > 0 && result.costUsd > 0);
});

test('a call of a tool that was not offered comes back as a call too, not as a failure', async () => {
  for (const tools of [[calculator], []]) {
    const result = await streamModelText(registry, { selection: {}, messages: question, tools, mockOptions: script([{ tool: 'bash', args: { command: 'ls' } }]) });
    assert.deepEqual(result.toolCalls, [{ toolCallId: 'mock-call-1-1', toolName: 'bash', input: { command: 'ls' } }]);
  }
});

test('tool calls and results in the history reach the model; toolChoice none asks for text only', async () => {
  const messages: ModelMessage[] = [
    ...question,
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'calculator', input: { expression: '2*(3+4)' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'calculator', output: { type: 'json', value: 14 } }] },
  ];
  const deltas: string[] = [];
  const answer = await streamModelText(registry, {
    selection: {}, messages, tools: [calculator], toolChoice: 'none', onDelta: (delta) => deltas.push(delta),
    mockOptions: script([{ tool: 'calculator', args: { expression: '1' } }, { tool: 'calculator', args: { expression: '2' } }]),
  });
  assert.deepEqual(answer.toolCalls, []);
  assert.match(answer.text, /Tool results: calculator: 14\.$/);
  assert.equal(deltas.join(''), answer.text);
});

test('without tools the result has no toolCalls field, as before', async () => {
  const result = await streamModelText(registry, { selection: {}, messages: question, mockOptions: script([{ tool: 'calculator', args: {} }]) });
  assert.equal('toolCalls' in result, false);
});
