import type { ModelMessage, SystemModelMessage, ToolSet } from 'ai';
import type { ProviderKind } from './model-catalog.ts';

export type Prompt = { system?: string; messages: ModelMessage[]; tools?: ToolSet };

export type MarkedPrompt = { system?: string | SystemModelMessage; messages: ModelMessage[]; tools?: ToolSet };

/** Anthropic's 5-minute cache; the AI SDK turns it into `cache_control` on the block it marks. */
const CACHE_CONTROL = { type: 'ephemeral' } as const;

type ProviderOptions = NonNullable<ModelMessage['providerOptions']>;

const withBreakpoint = (options: ProviderOptions | undefined): ProviderOptions =>
  ({ ...options, anthropic: { ...options?.anthropic, cacheControl: CACHE_CONTROL } });

/**
 * Anthropic prompt caching (issue 30): an agent loop sends the same prefix at every turn — tools, system prompt, the
 * turns so far — and only adds to its end, so breakpoints on the last tool, the system prompt and the last message
 * let the next turn read all of it from the cache (Anthropic looks back from a breakpoint for the longest prefix
 * written before) and write only what is new. Three of the four breakpoints Anthropic allows. Only for calls that
 * are part of a loop or a conversation (tools offered, or turns before the last): a one-off call would pay the
 * cache-write premium for nothing. Other providers cache on their own (OpenAI) or not at all: their prompts are
 * returned unchanged.
 */
export function markStablePrefix(kind: ProviderKind, prompt: Prompt): MarkedPrompt {
  const isLoop = (prompt.tools !== undefined && Object.keys(prompt.tools).length > 0) || prompt.messages.length > 1;
  if (kind !== 'anthropic' || !isLoop) return prompt;
  return {
    system: prompt.system === undefined || prompt.system === '' ? prompt.system : { role: 'system', content: prompt.system, providerOptions: withBreakpoint(undefined) },
    tools: prompt.tools && markLastTool(prompt.tools),
    messages: prompt.messages.map((message, index) => (index === prompt.messages.length - 1 ? markMessage(message) : message)),
  };
}

function markLastTool(tools: ToolSet): ToolSet {
  const entries = Object.entries(tools);
  if (entries.length === 0) return tools;
  const [name, last] = entries[entries.length - 1];
  return { ...tools, [name]: { ...last, providerOptions: withBreakpoint(last.providerOptions) } };
}

function markMessage(message: ModelMessage): ModelMessage {
  return { ...message, providerOptions: withBreakpoint(message.providerOptions) } as ModelMessage;
}
