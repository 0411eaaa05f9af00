import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LanguageModelV3FunctionTool, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { chooseMockToolCalls } from '../../../src/llm/mock-tool-calls.ts';
import { BUILT_IN_TOOLS } from '../../../src/tools/built-ins.ts';

/** The gateway's own tools as an agent of the default role is offered them (non-dangerous, not kept for named agents). */
const offered: LanguageModelV3FunctionTool[] = BUILT_IN_TOOLS.filter((tool) => !tool.dangerous && !tool.namedOnly)
  .map((tool) => ({ type: 'function', name: tool.name, description: tool.description, inputSchema: tool.parameters as never }));
const ask = (text: string): LanguageModelV3Prompt => [{ role: 'user', content: [{ type: 'text', text }] }];
const call = (text: string) => chooseMockToolCalls({ prompt: ask(text), tools: offered });

/** [request that names no tool, the tool a model would call, arguments expected (a subset)]. */
const TOOL_NEEDING: [string, string, Record<string, unknown>][] = [
  ['What is 17 * 23?', 'calculator', { expression: '17 * 23' }],
  ['How much is 1200 divided by 16?', 'calculator', { expression: '1200 / 16' }],
  ['Work out (3 + 4) * 12 for me', 'calculator', { expression: '(3 + 4) * 12' }],
  ['What is the square root of 144?', 'calculator', { expression: 'sqrt(144)' }],
  ['What is 15% of 80?', 'calculator', { expression: '15 / 100 * 80' }],
  ['Summarise https://example.org/blog/post-1 in three bullet points', 'web_fetch', { url: 'https://example.org/blog/post-1' }],
  ['What does the page at http://docs.example.com/install say about Windows?', 'web_fetch', { url: 'http://docs.example.com/install' }],
  ['Who won the 2022 football world cup?', 'web_search', { query: 'won the 2022 football world cup' }],
  ['What is the latest stable release of PostgreSQL?', 'web_search', { query: 'the latest stable release of PostgreSQL' }],
  ['When was the Eiffel Tower built?', 'web_search', { query: 'the Eiffel Tower built' }],
  ['Which company makes the Model Y?', 'web_search', {}],
  ['Find news about the European Central Bank interest rate decision', 'web_search', {}],
];

test(`${TOOL_NEEDING.length} requests that need a tool call the one a model would choose, without naming it`, () => {
  assert.ok(TOOL_NEEDING.length >= 10);
  for (const [request, tool, args] of TOOL_NEEDING) {
    const calls = call(request);
    assert.equal(calls.length, 1, request);
    assert.equal(calls[0].toolName, tool, request);
    for (const [name, value] of Object.entries(args)) assert.deepEqual((calls[0].input as Record<string, unknown>)[name], value, `${request}: ${name}`);
  }
});

test('requests that need no tool get none', () => {
  for (const request of ['Write a haiku about autumn', 'Say hello to everyone', 'Draft a polite reply declining the meeting', 'Meet me on 2024-05-01']) {
    assert.deepEqual(call(request), [], request);
  }
});

test('a client tool is chosen by what its name is about, and its arguments come from the request', () => {
  const weather: LanguageModelV3FunctionTool = { type: 'function', name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
  const stocks: LanguageModelV3FunctionTool = { type: 'function', name: 'stockPrice', inputSchema: { type: 'object', properties: { symbol: { type: 'string', enum: ['AAPL', 'MSFT'] } }, required: ['symbol'] } };
  const [first] = chooseMockToolCalls({ prompt: ask('Is it raining? What is the weather like in Buenos Aires today?'), tools: [stocks, weather] });
  assert.deepEqual([first.toolName, first.input], ['get_weather', { city: 'Buenos Aires' }]);
  const [second] = chooseMockToolCalls({ prompt: ask('Show the latest stock price for Apple'), tools: [weather, stocks] });
  assert.deepEqual([second.toolName, second.input], ['stockPrice', { symbol: 'AAPL' }]);
});
