import type { LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import { sampleFromJsonSchema } from './json-schema-sample.ts';

/**
 * How the mock model picks a tool from what a request says, as a model would, without the request naming it
 * (issue 31, scope 6): arithmetic goes to a calculator, a web address to a page fetcher, a tool whose name the
 * request talks about (the weather → `get_weather`) to that tool, a factual question to a search tool. The
 * arguments come from the request where a parameter's name says what it wants (an expression, a url, a query, a
 * city), else from the parameter's schema. Deterministic, so tests can assert the choice.
 */

type Schema = { type?: unknown; properties?: Record<string, Schema>; required?: string[]; maxLength?: number; items?: Schema };
export type ChosenTool = { tool: LanguageModelV3FunctionTool; input: Record<string, unknown> };

interface Intent {
  /** What the request says, or undefined when it says nothing of the kind. */
  find(query: string): string | undefined;
  /** Which tool serves it, judged by its name and description. */
  serves: RegExp;
}

const NUMBER_WORDS: [RegExp, string][] = [
  [/\bplus\b/gi, '+'], [/\bminus\b/gi, '-'], [/\b(times|multiplied by)\b/gi, '*'], [/\bdivided by\b/gi, '/'],
  [/\bto the power of\b/gi, '^'], [/(\d)\s*[x×]\s*(\d)/g, '$1 * $2'], [/÷/g, '/'],
];
const ARITHMETIC = /[(\d][\d\s.,()]*(?:\s*[-+*/^%]\s*[(\d][\d\s.()]*)+|\bsqrt\s*\(?\s*\d[\d.]*\)?|\d[\d.]*\s*% of \d[\d.]*/i;
const SQUARE_ROOT = /\bsquare root of\s+(\d[\d.]*)/i;
const PERCENT_OF = /\b(\d[\d.]*)\s*(?:%|percent) of\s+(\d[\d.]*)/i;
const URL = /https?:\/\/[^\s"'<>)\]]+/i;
const QUESTION = /^(who|what|when|where|which|whose|why|how|is|are|was|were|does|do|did|has|have|can|could|list|name|find|search|look up|tell me)\b|\?\s*$|\b(latest|current|recent|news|today|this week|population|capital of|founded|invented)\b/i;

const intents: Intent[] = [
  { find: arithmeticIn, serves: /calculat|arithmetic|\bmath|expression|evaluat|comput/i },
  { find: (query) => URL.exec(query)?.[0].replace(/[.,;:!?]+$/, ''), serves: /fetch|url|web ?page|browse|scrape|download|read.*page/i },
];
const searchIntent: Intent = { find: (query) => (QUESTION.test(query.trim()) ? query : undefined), serves: /search|look ?up|lookup/i };

/** The tool a model would choose for `query` among `offered`, with its arguments; undefined when none fits. */
export function chooseToolByContent(offered: LanguageModelV3FunctionTool[], query: string): ChosenTool | undefined {
  for (const intent of intents) {
    const found = intent.find(query);
    const tool = found === undefined ? undefined : servingTool(offered, intent.serves);
    if (tool) return { tool, input: argumentsFor(tool, query) };
  }
  const talkedAbout = toolTalkedAbout(offered, query);
  if (talkedAbout) return { tool: talkedAbout, input: argumentsFor(talkedAbout, query) };
  const search = searchIntent.find(query) === undefined ? undefined : servingTool(offered, searchIntent.serves);
  return search ? { tool: search, input: argumentsFor(search, query) } : undefined;
}

/** The tool whose name says it serves, else the first whose description does (web_search's mentions fetching a url). */
function servingTool(offered: LanguageModelV3FunctionTool[], serves: RegExp): LanguageModelV3FunctionTool | undefined {
  return offered.find((candidate) => serves.test(candidate.name.replace(/_/g, ' '))) ?? offered.find((candidate) => serves.test(candidate.description ?? ''));
}

/** `tool` called for `query` (a forced choice): the arguments it would get. */
export const callFor = (tool: LanguageModelV3FunctionTool, query: string): ChosenTool => ({ tool, input: argumentsFor(tool, query) });

function arithmeticIn(query: string): string | undefined {
  const root = SQUARE_ROOT.exec(query);
  if (root) return `sqrt(${root[1]})`;
  const percent = PERCENT_OF.exec(query);
  if (percent) return `${percent[1]} / 100 * ${percent[2]}`;
  const spelled = NUMBER_WORDS.reduce((text, [pattern, symbol]) => text.replace(pattern, symbol), query);
  const match = ARITHMETIC.exec(spelled)?.[0].trim().replace(/[\s,.]+$/, '');
  // A date (2024-05-01) or a phone number is not a sum: an operator between two numbers, not only dashes between digits.
  if (!match || /^\d+(-\d+)+$/.test(match.replace(/\s/g, ''))) return undefined;
  return balanced(match);
}

const balanced = (expression: string) => {
  const open = (expression.match(/\(/g) ?? []).length - (expression.match(/\)/g) ?? []).length;
  return open > 0 ? expression + ')'.repeat(open) : expression.replace(/\)+$/, (closing) => closing.slice(0, Math.max(0, closing.length + open)));
};

const GENERIC_WORDS = new Set(['get', 'set', 'list', 'find', 'make', 'tool', 'data', 'info', 'information', 'web', 'file', 'read', 'write', 'the', 'for', 'and', 'with', 'run', 'call', 'use']);

/**
 * The tool one of whose distinctive name words (`weather` of `get_weather`) the request uses, the most such words
 * winning. A one-word name counts only when named outright (mock-tool-calls.ts): "a calculators shop" asks for no sum.
 */
function toolTalkedAbout(offered: LanguageModelV3FunctionTool[], query: string): LanguageModelV3FunctionTool | undefined {
  const words = new Set(wordsOf(query));
  const distinctive = (name: string) => {
    const parts = wordsOf(name);
    return parts.length < 2 ? [] : parts.filter((word) => word.length >= 4 && !GENERIC_WORDS.has(word));
  };
  const scored = offered
    .map((tool) => ({ tool, score: distinctive(tool.name).filter((word) => words.has(word)).length }))
    .filter(({ score }) => score > 0)
    .sort((left, right) => right.score - left.score);
  return scored[0]?.tool;
}

/** Lower-case words, split at `_`, `-` and camelCase, with a plural `s` dropped. */
function wordsOf(text: string): string[] {
  return text.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/)
    .filter(Boolean).map((word) => (word.length > 4 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word));
}

/** Each parameter the request can fill by its name; the other required ones sampled from their schema. */
function argumentsFor(tool: LanguageModelV3FunctionTool, query: string): Record<string, unknown> {
  const schema = (tool.inputSchema ?? {}) as Schema;
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const input: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const value = valueFromRequest(name, property, query);
    if (value !== undefined) input[name] = value;
    else if (required.has(name)) input[name] = sampleFromJsonSchema(property);
  }
  // web_fetch-like tools take `url` or `urls`: one is enough.
  if ('url' in input && 'urls' in input) delete input.urls;
  return input;
}

function valueFromRequest(name: string, property: Schema, query: string): unknown {
  const key = name.toLowerCase();
  const text = (value: string | undefined) => (value === undefined ? undefined : value.slice(0, property.maxLength ?? value.length));
  if (/expression|expr|formula|equation/.test(key)) return text(arithmeticIn(query));
  if (/^urls?$|link|page_?url|address/.test(key)) {
    const url = URL.exec(query)?.[0].replace(/[.,;:!?]+$/, '');
    if (url === undefined) return undefined;
    return property.type === 'array' ? [url] : text(url);
  }
  if (/query|^q$|search|question|keywords?|topic|term/.test(key)) return text(searchQueryOf(query));
  if (/city|location|place|town|country/.test(key)) return text(placeIn(query));
  return undefined;
}

/** A search engine's query: the request without its question words and punctuation. */
function searchQueryOf(query: string): string {
  const trimmed = query.trim().replace(/^(please\s+)?(search( the web)? for|look up|find( out)?|tell me|who|what|when|where|which|why|how)\s+(is|are|was|were|did|does|do)?\s*/i, '').replace(/[?!.]+$/, '');
  return trimmed || query.trim();
}

function placeIn(query: string): string | undefined {
  return /\b(?:in|at|for|of)\s+([A-Z][\p{L}-]+(?:\s+[A-Z][\p{L}-]+)*)/u.exec(query)?.[1];
}
