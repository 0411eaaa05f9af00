import type { LanguageModelV3CallOptions, LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { sampleFromJsonSchema } from './json-schema-sample.ts';
import { mockDecomposition, mockSynthesis } from './mock-plans.ts';
import { describeMockImages } from './mock-vision.ts';
import { composeResearchAnswer } from './mock-research.ts';
import { composeSwarmAnswer } from './mock-swarm.ts';

/**
 * The mock model's answer, a pure function of the call: it quotes the system prompt, the query
 * (last user message) and the turn before it, and counts the earlier messages, so tests can see
 * exactly what context reached the model. JSON calls get a minimal value valid for the schema.
 */
export function composeMockAnswer(options: LanguageModelV3CallOptions): string {
  const phase = composePhaseAnswer(options);
  if (phase !== undefined) return phase;
  const format = options.responseFormat;
  const seen = describeMockImages(options.prompt);
  if (format?.type !== 'json') return (seen ? `${seen} ` : '') + composeTextAnswer(options.prompt) + fillerWords(options);
  if (format.schema === undefined) return JSON.stringify({ answer: composeTextAnswer(options.prompt) });
  return JSON.stringify(sampleFromJsonSchema(format.schema));
}

/** Answers the planning phases in kind (a JSON plan for decomposition, a summary of results for synthesis) and research's phases. */
function composePhaseAnswer(options: LanguageModelV3CallOptions): string | undefined {
  const mock = options.providerOptions?.mock;
  const query = lastUserText(options.prompt);
  if (mock?.purpose === 'decomposition') return JSON.stringify(mock.plan ?? mockDecomposition(query));
  if (mock?.purpose === 'synthesis') return mockSynthesis(query);
  return composeResearchAnswer(options) ?? composeSwarmAnswer(options);
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  const message = prompt.findLast((candidate) => candidate.role === 'user');
  return message ? messageText(message) : '';
}

/**
 * `providerOptions.mock.answerWords` lengthens the answer by that many numbered words, so tests and
 * demos can produce long streams (many deltas, large event logs) deterministically.
 */
function fillerWords(options: LanguageModelV3CallOptions): string {
  const count = options.providerOptions?.mock?.answerWords;
  if (typeof count !== 'number' || count <= 0) return '';
  return Array.from({ length: Math.min(count, 1_000_000) }, (_, index) => ` w${index + 1}`).join('');
}

/** Rough token count of everything the model was sent: one token per four characters. */
export function estimatePromptTokens(prompt: LanguageModelV3Prompt): number {
  const characters = prompt.reduce((total, message) => total + messageText(message).length, 0);
  return Math.ceil(characters / 4);
}

function composeTextAnswer(prompt: LanguageModelV3Prompt): string {
  const system = prompt.filter((message) => message.role === 'system').map(messageText).join(' ');
  const conversation = prompt.filter((message) => message.role !== 'system');
  const queryIndex = conversation.findLastIndex((message) => message.role === 'user');
  const earlier = queryIndex >= 0 ? conversation.slice(0, queryIndex) : conversation;
  const query = queryIndex >= 0 ? messageText(conversation[queryIndex]) : '';
  const previous = earlier.at(-1);
  const count = `${earlier.length} earlier ${earlier.length === 1 ? 'message' : 'messages'}`;
  return [
    system ? `System prompt "${firstWords(system, 6)}". ` : '',
    `Mock answer to "${firstWords(query, 12)}" after ${count}`,
    previous ? `; previous ${previous.role} turn: "${firstWords(messageText(previous), 8)}"` : '',
    '.',
  ].join('');
}

type ContentPart = Exclude<LanguageModelV3Message['content'], string>[number];

function messageText(message: LanguageModelV3Message): string {
  if (typeof message.content === 'string') return message.content;
  const parts: readonly ContentPart[] = message.content;
  return parts.map(partText).filter((text) => text.length > 0).join(' ');
}

function partText(part: ContentPart): string {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return part.text;
    case 'tool-call':
      return JSON.stringify(part.input);
    case 'tool-result':
      return JSON.stringify(part.output);
    default:
      return '';
  }
}

function firstWords(text: string, count: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, count).join(' ') + (words.length > count ? ' …' : '');
}
