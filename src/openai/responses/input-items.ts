import { badRequest } from '../../errors.ts';
import type { ConversationMessage } from '../../llm/stream-model-text.ts';
import { inputItemIdOf } from './response-ids.ts';
import type { ResponseCreateRequest } from './schemas.ts';

const ROLES = ['user', 'assistant', 'system', 'developer'] as const;
type Role = typeof ROLES[number];
const TEXT_PART_TYPES = new Set(['input_text', 'output_text']);
const ITEM_KEYS = new Set(['type', 'role', 'content', 'id', 'status']);
/** `annotations` and `logprobs` come along when a client sends an earlier output back as input. */
const PART_KEYS = new Set(['type', 'text', 'annotations', 'logprobs']);

/** An input message as stored with its response and listed by /input_items. */
export interface StoredInputItem {
  id: string;
  type: 'message';
  role: Role;
  content: Array<{ type: 'input_text' | 'output_text'; text: string }>;
}

/** The request's `input` as message items: text, or a list of message items with text parts; anything else is refused by its path. */
export function normalizeInput(input: ResponseCreateRequest['input'], taskId: string): StoredInputItem[] {
  if (typeof input === 'string') return [{ id: inputItemIdOf(taskId, 0), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.map((item, index) => normalizeItem(item as Record<string, unknown>, `input[${index}]`, inputItemIdOf(taskId, index)));
}

function normalizeItem(item: Record<string, unknown>, path: string, id: string): StoredInputItem {
  if (item.type !== undefined && item.type !== 'message') throw badRequest(`${path}.type: ${String(item.type)} items are not supported yet (only message items)`);
  for (const key of Object.keys(item)) if (!ITEM_KEYS.has(key)) throw badRequest(`unknown field in ${path}: ${key}`);
  if (!ROLES.includes(item.role as Role)) throw badRequest(`${path}.role must be one of ${ROLES.join(', ')}`);
  const role = item.role as Role;
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  if (typeof item.content === 'string') return { id, type: 'message', role, content: [{ type: textType, text: item.content }] };
  if (!Array.isArray(item.content) || item.content.length === 0) throw badRequest(`${path}.content must be a string or a non-empty list of text parts`);
  return { id, type: 'message', role, content: item.content.map((part, index) => normalizePart(part, `${path}.content[${index}]`)) };
}

function normalizePart(part: unknown, path: string): StoredInputItem['content'][number] {
  if (typeof part !== 'object' || part === null) throw badRequest(`${path} must be an object`);
  const { type, text } = part as Record<string, unknown>;
  if (typeof type !== 'string' || !TEXT_PART_TYPES.has(type)) throw badRequest(`${path}.type: ${String(type)} is not supported (only input_text and output_text parts)`);
  for (const key of Object.keys(part)) if (!PART_KEYS.has(key)) throw badRequest(`unknown field in ${path}: ${key}`);
  if (typeof text !== 'string') throw badRequest(`${path}.text must be a string`);
  return { type: type as 'input_text' | 'output_text', text };
}

export const itemText = (item: StoredInputItem) => item.content.map((part) => part.text).join('');

/** An earlier response of the chain: what it was asked and what it answered. */
export interface EarlierTurn { input: StoredInputItem[]; answer: string | null }

export interface ResponseConversation {
  query: string;
  systemPrompt: string | undefined;
  history: ConversationMessage[];
}

/**
 * What the model is sent: the chain's earlier inputs and answers, then this request's messages, the last of
 * which (a user message) is the query. `instructions` and this request's system and developer messages are
 * the system prompt; earlier responses' instructions do not carry over (as with the OpenAI API).
 */
export function toConversation(earlier: EarlierTurn[], items: StoredInputItem[], instructions: string | null | undefined): ResponseConversation {
  const system = [instructions ?? '', ...items.filter(isSystemLike).map(itemText)].filter((text) => text.trim() !== '');
  const messages = items.filter((item) => !isSystemLike(item)).map(toMessage);
  const last = messages.at(-1);
  if (!last || last.role !== 'user') throw badRequest('input must end with a user message: it is what the model answers');
  if (last.content.trim() === '') throw badRequest('input: the last user message is empty');
  const earlierMessages = earlier.flatMap((turn) => [
    ...turn.input.filter((item) => !isSystemLike(item)).map(toMessage),
    ...(turn.answer === null ? [] : [{ role: 'assistant' as const, content: turn.answer }]),
  ]);
  return {
    query: last.content,
    systemPrompt: system.length === 0 ? undefined : system.join('\n\n'),
    history: [...earlierMessages, ...messages.slice(0, -1)],
  };
}

const isSystemLike = (item: StoredInputItem) => item.role === 'system' || item.role === 'developer';
const toMessage = (item: StoredInputItem): ConversationMessage => ({ role: item.role as 'user' | 'assistant', content: itemText(item) });

/** An input item as /input_items lists it (openai `ResponseItem`): assistant messages in the output message shape. */
export function toListedItem(item: StoredInputItem) {
  if (item.role === 'assistant') {
    return { ...item, status: 'completed', content: item.content.map((part) => ({ type: 'output_text', text: part.text, annotations: [] })) };
  }
  return { ...item, status: 'completed' };
}
