import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from '@ai-sdk/provider';
import { callFor, chooseToolByContent, type ChosenTool } from './mock-tool-choice.ts';
import { researchAgentToolCalls } from './mock-research.ts';

export interface MockToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** How far after a tool's name the mock looks for its JSON arguments. */
const ARGUMENTS_SEARCH_CHARS = 4000;
const RESULT_NOTE_CHARS = 200;

/**
 * The tool calls the mock model makes on this turn; none means it answers with text. Scripted
 * (`providerOptions.mock.toolCalls`): turn k (k = assistant tool-call turns already in the prompt) makes the
 * k-th entry, offered or not, so tests can script refusals too; an entry that is an array makes several calls
 * at once. Unscripted: a research agent searches then reads (mock-research.ts); otherwise, on the first turn, the
 * offered tool the last user message names, else the one a model would choose from what it says
 * (mock-tool-choice.ts); after tool results it answers with text. `toolChoice` is obeyed: `none` never calls,
 * `required` always calls (the best fit, else the first tool), a named tool is the one called.
 */
export function chooseMockToolCalls(options: LanguageModelV3CallOptions): MockToolCall[] {
  const choice = options.toolChoice;
  if (choice?.type === 'none') return [];
  const turn = toolCallTurns(options.prompt);
  const script = options.providerOptions?.mock?.toolCalls;
  if (Array.isArray(script)) return scriptedCalls(script[turn], turn);
  const research = researchAgentToolCalls(options);
  if (research) return research;
  const offered = (options.tools ?? []).filter((tool): tool is LanguageModelV3FunctionTool => tool.type === 'function');
  const query = lastUserText(options.prompt);
  if (choice?.type === 'tool') {
    const forced = offered.find((tool) => tool.name === choice.toolName);
    return forced ? [asCall(namedToolCall(offered, query, forced) ?? callFor(forced, query), turn)] : [];
  }
  if (turn > 0 && choice?.type !== 'required') return [];
  const chosen = namedToolCall(offered, query) ?? chooseToolByContent(offered, query)
    ?? (choice?.type === 'required' && offered.length > 0 ? callFor(offered[0], query) : undefined);
  return chosen ? [asCall(chosen, turn)] : [];
}

const asCall = ({ tool, input }: ChosenTool, turn: number): MockToolCall => ({ toolCallId: callId(turn, 0), toolName: tool.name, input });

function toolCallTurns(prompt: LanguageModelV3Prompt): number {
  return prompt.filter((message) => message.role === 'assistant' && message.content.some((part) => part.type === 'tool-call')).length;
}

function scriptedCalls(entry: unknown, turn: number): MockToolCall[] {
  if (entry === undefined || entry === null) return [];
  const entries = Array.isArray(entry) ? entry : [entry];
  return entries.map((scripted, index) => {
    const { tool, args } = (scripted ?? {}) as { tool?: unknown; args?: unknown };
    return { toolCallId: callId(turn, index), toolName: String(tool), input: args ?? {} };
  });
}

const callId = (turn: number, index: number) => `mock-call-${turn + 1}-${index + 1}`;

/**
 * The first offered tool (or `only` that one) the last user message names, with the JSON object that follows its
 * name, or arguments from the request.
 */
function namedToolCall(offered: LanguageModelV3FunctionTool[], query: string, only?: LanguageModelV3FunctionTool): ChosenTool | undefined {
  const named = (only ? [only] : offered)
    .map((tool) => ({ tool, at: wholeWordIndex(query, tool.name) }))
    .filter(({ at }) => at >= 0)
    .sort((left, right) => left.at - right.at)[0];
  if (!named) return undefined;
  const written = jsonObjectAfter(query, named.at + named.tool.name.length);
  if (written === undefined) return callFor(named.tool, query);
  return { tool: named.tool, input: (written.tool_parameters ?? written) as Record<string, unknown> };
}

function wholeWordIndex(text: string, word: string): number {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w])${escaped}(?![\\w])`).exec(text)?.index ?? -1;
}

/** The first JSON object after `from`, e.g. `{"expression": "2+2"}` or `{"tool_parameters": {...}}`. */
function jsonObjectAfter(text: string, from: number): Record<string, unknown> | undefined {
  const start = text.indexOf('{', from);
  if (start < 0) return undefined;
  const window = text.slice(start, start + ARGUMENTS_SEARCH_CHARS);
  for (let end = window.indexOf('}'); end >= 0; end = window.indexOf('}', end + 1)) {
    try {
      const value: unknown = JSON.parse(window.slice(0, end + 1));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // not closed yet: try the next brace
    }
  }
  return undefined;
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  const message = prompt.findLast((candidate) => candidate.role === 'user');
  return message ? textOf(message) : '';
}

function textOf(message: LanguageModelV3Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
}

/**
 * ` Tool results: calculator: 14.` for the tool results in the prompt, so a test can see that what a tool
 * returned reached the model. Empty when there are none.
 */
export function toolResultsNote(prompt: LanguageModelV3Prompt): string {
  const outputs = prompt.flatMap((message) => (message.role === 'tool' ? message.content : []))
    .flatMap((part) => (part.type === 'tool-result' ? [{ tool: part.toolName, text: outputText(part.output) }] : []));
  if (outputs.length === 0) return '';
  const results = outputs.map(({ tool, text }) => `${tool}: ${text.slice(0, RESULT_NOTE_CHARS)}`);
  return ` Tool results: ${results.join('; ')}.${sourcesNote(outputs.map(({ text }) => text))}`;
}

/** Like a research model, the mock cites the pages its tools returned: every distinct url of the fetched pages. */
function sourcesNote(outputs: string[]): string {
  const urls = [...new Set(outputs.flatMap((text) => [...text.matchAll(/"(?:final_)?url":"(https?:\/\/[^"]+)"/g)].map((match) => match[1])))];
  return urls.length === 0 ? '' : ` Sources: ${urls.slice(0, MAX_CITED_SOURCES).join(', ')}.`;
}

const MAX_CITED_SOURCES = 10;

function outputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return typeof output.value === 'string' ? output.value : JSON.stringify(output.value);
    case 'execution-denied':
      return `denied${output.reason ? ` (${output.reason})` : ''}`;
    default:
      return JSON.stringify(output.value);
  }
}
