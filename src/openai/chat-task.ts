import { badRequest } from '../errors.ts';
import type { ConversationMessage } from '../llm/stream-model-text.ts';
import type { ServiceModel } from './models.ts';
import type { ChatCompletionRequest } from './schemas.ts';

export const MAX_TOKENS_CAP = 16_384;

export interface ChatTask {
  query: string;
  systemPrompt: string | undefined;
  /** Every message before the last user message except the system prompt, oldest first. */
  history: ConversationMessage[];
  maxTokens: number;
}

/**
 * Maps a chat request to a task (spec 4.11): the last user message is the query, the first system
 * message the system prompt, the others the conversation history.
 */
export function toChatTask(request: ChatCompletionRequest, model: ServiceModel): ChatTask {
  if (request.n !== undefined && request.n !== 1) throw badRequest('n must be 1: only one choice is supported');
  const messages = request.messages.map((message) => ({ role: message.role, content: textOf(message.content) }));
  const queryIndex = messages.findLastIndex((message) => message.role === 'user');
  if (queryIndex === -1) throw badRequest('messages must include a user message');
  if (messages[queryIndex].content.trim() === '') throw badRequest('the last user message is empty');
  const systemIndex = messages.findIndex((message) => message.role === 'system');
  const history = messages.slice(0, queryIndex)
    .filter((message, index) => index !== systemIndex && message.role !== 'system') as ConversationMessage[];
  return {
    query: messages[queryIndex].content,
    systemPrompt: systemIndex === -1 ? undefined : messages[systemIndex].content,
    history,
    maxTokens: Math.min(request.max_tokens ?? model.defaultMaxTokens, MAX_TOKENS_CAP),
  };
}

function textOf(content: ChatCompletionRequest['messages'][number]['content']): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/** The task context a chat request runs with: what a client could send, and what only the server sets. */
export function chatTaskContext(chat: ChatTask, model: ServiceModel): { context: Record<string, unknown>; serverContext: Record<string, unknown> } {
  return {
    context: {
      ...(chat.systemPrompt === undefined ? {} : { system_prompt: chat.systemPrompt }),
      max_output_tokens: chat.maxTokens,
      ...(model.mode === 'research' ? { force_research: true, research_strategy: model.researchStrategy } : {}),
      ...(model.mode === 'ads_research' ? { role: 'ads_research' } : {}),
    },
    serverContext: { conversation_history: chat.history, openai_model: model.id },
  };
}
