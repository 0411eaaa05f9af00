import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { createMockModel } from '../../../src/llm/mock-provider.ts';
import { chooseMockToolCalls, toolResultsNote } from '../../../src/llm/mock-tool-calls.ts';

const calculator: LanguageModelV3FunctionTool = {
  type: 'function', name: 'calculator', description: 'Evaluates arithmetic',
  inputSchema: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
};
const search: LanguageModelV3FunctionTool = {
  type: 'function', name: 'web_search', description: 'Searches the web',
  inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 3 } } },
};

const ask = (text: string): LanguageModelV3Prompt => [{ role: 'user', content: [{ type: 'text', text }] }];

/** The prompt after `turns` rounds of one tool call and its result. */
function afterToolTurns(turns: number, result: unknown = 14): LanguageModelV3Prompt {
  return [
    ...ask('What is 2*(3+4)?'),
    ...Array.from({ length: turns }, (_, turn): LanguageModelV3Prompt => [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${turn}`, toolName: 'calculator', input: { expression: '2*(3+4)' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${turn}`, toolName: 'calculator', output: { type: 'json', value: result as never } }] },
    ]).flat(),
  ];
}

const options = (prompt: LanguageModelV3Prompt, overrides: Partial<LanguageModelV3CallOptions> = {}): LanguageModelV3CallOptions => ({ prompt, ...overrides });
const scripted = (toolCalls: unknown[]) => ({ providerOptions: { mock: { toolCalls } } as never });

test('scripted: turn k makes the k-th scripted call, offered or not, then the script is used up', () => {
  const script = [{ tool: 'calculator', args: { expression: '2*(3+4)' } }, { tool: 'web_fetch', args: { url: 'https://example.com' } }];
  assert.deepEqual(chooseMockToolCalls(options(afterToolTurns(0), scripted(script))),
    [{ toolCallId: 'mock-call-1-1', toolName: 'calculator', input: { expression: '2*(3+4)' } }]);
  assert.deepEqual(chooseMockToolCalls(options(afterToolTurns(1), { tools: [calculator], ...scripted(script) })),
    [{ toolCallId: 'mock-call-2-1', toolName: 'web_fetch', input: { url: 'https://example.com' } }]);
  assert.deepEqual(chooseMockToolCalls(options(afterToolTurns(2), scripted(script))), []);
});

test('scripted: an entry that is an array makes several calls in one turn; a call without args gets {}', () => {
  const calls = chooseMockToolCalls(options(afterToolTurns(0), scripted([[{ tool: 'calculator', args: { expression: '1' } }, { tool: 'calculator' }]])));
  assert.deepEqual(calls.map((call) => [call.toolCallId, call.input]), [['mock-call-1-1', { expression: '1' }], ['mock-call-1-2', {}]]);
});

test('a turn that asks for text only never calls a tool', () => {
  const script = [{ tool: 'calculator', args: { expression: '1' } }];
  assert.deepEqual(chooseMockToolCalls(options(afterToolTurns(0), { ...scripted(script), toolChoice: { type: 'none' } })), []);
  assert.deepEqual(chooseMockToolCalls(options(ask('use the calculator'), { tools: [calculator], toolChoice: { type: 'none' } })), []);
});

test('unscripted: an offered tool named in the last user message is called once, with the JSON after its name', () => {
  const prompt = ask('Please use calculator with {"tool_parameters": {"expression": "6*7"}} to check.');
  assert.deepEqual(chooseMockToolCalls(options(prompt, { tools: [search, calculator] })),
    [{ toolCallId: 'mock-call-1-1', toolName: 'calculator', input: { expression: '6*7' } }]);
  const plain = ask('calculator {"expression": "1+2", "note": "a } inside a string"} and more {text}');
  assert.deepEqual(chooseMockToolCalls(options(plain, { tools: [calculator] }))[0].input, { expression: '1+2', note: 'a } inside a string' });
  assert.deepEqual(chooseMockToolCalls(options([...prompt, ...afterToolTurns(1).slice(1)], { tools: [calculator] })), []);
});

test('unscripted: without JSON the arguments come from the request; unnamed or unoffered tools are not called', () => {
  assert.deepEqual(chooseMockToolCalls(options(ask('search with web_search please'), { tools: [search, calculator] }))[0].input,
    { query: 'search with web_search please' });
  assert.deepEqual(chooseMockToolCalls(options(ask('a calculators shop'), { tools: [calculator] })), []);
  assert.deepEqual(chooseMockToolCalls(options(ask('use the calculator'))), []);
  assert.deepEqual(chooseMockToolCalls(options(ask('use the calculator'), { tools: [search] })), []);
});

test('the tool results in the prompt are quoted', () => {
  assert.equal(toolResultsNote(afterToolTurns(0)), '');
  assert.equal(toolResultsNote(afterToolTurns(2)), ' Tool results: calculator: 14; calculator: 14.');
  assert.equal(toolResultsNote([{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'bash', output: { type: 'error-text', value: 'tool bash is not allowed for role analysis' } }] }]),
    ' Tool results: bash: tool bash is not allowed for role analysis.');
});

test('the mock model streams a tool call with finish reason tool-calls, then answers with the results', async () => {
  const model = createMockModel('mock-small');
  const script = scripted([{ tool: 'calculator', args: { expression: '2*(3+4)' } }]);
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of (await model.doStream(options(afterToolTurns(0), { tools: [calculator], ...script }))).stream) parts.push(part);
  assert.deepEqual(parts.filter((part) => part.type === 'tool-call'),
    [{ type: 'tool-call', toolCallId: 'mock-call-1-1', toolName: 'calculator', input: '{"expression":"2*(3+4)"}' }]);
  assert.equal(parts.some((part) => part.type === 'text-delta'), false);
  const finish = parts.at(-1);
  assert.ok(finish?.type === 'finish' && finish.finishReason.unified === 'tool-calls');
  const answer = await model.doGenerate(options(afterToolTurns(1), { tools: [calculator], ...script }));
  assert.deepEqual(answer.finishReason, { unified: 'stop', raw: 'stop' });
  const text = answer.content.find((part) => part.type === 'text');
  assert.match(text?.type === 'text' ? text.text : '', /Mock answer to "What is 2\*\(3\+4\)\?".* Tool results: calculator: 14\.$/);
});
