import type { ModelMessage } from 'ai';
import { badRequest } from '../../errors.ts';
import type { ConversationMessage } from '../../llm/stream-model-text.ts';
import { parseToolArguments, type OpenAiToolCall } from '../client-tools.ts';
import { functionCallIdOf, inputItemIdOf } from './response-ids.ts';
import { IMAGES_ONLY_QUERY, imagePart } from '../vision.ts';
import type { ResponseCreateRequest } from './schemas.ts';

const ROLES = ['user', 'assistant', 'system', 'developer'] as const;
type Role = typeof ROLES[number];
/** `id` and `status` come along when a client sends an earlier output item back as input. */
const ITEM_KEYS: Record<string, Set<string>> = {
  message: new Set(['type', 'role', 'content', 'id', 'status']),
  function_call: new Set(['type', 'call_id', 'name', 'arguments', 'id', 'status']),
  function_call_output: new Set(['type', 'call_id', 'output', 'id', 'status']),
};
/** `annotations` and `logprobs` come along when a client sends an earlier output back as input. */
const TEXT_PART_KEYS = new Set(['type', 'text', 'annotations', 'logprobs']);
const PART_KEYS: Record<string, Set<string>> = {
  input_text: TEXT_PART_KEYS,
  output_text: TEXT_PART_KEYS,
  input_image: new Set(['type', 'image_url', 'detail', 'file_id']),
};
const IMAGE_DETAILS = ['auto', 'low', 'high'];

export type TextPart = { type: 'input_text' | 'output_text'; text: string };
/** An image of a user message: a data URL or a web address the gateway fetches (remote-images.ts). */
export type ImageInputPart = { type: 'input_image'; image_url: string; detail: string };
export interface MessageItem {
  id: string;
  type: 'message';
  role: Role;
  content: Array<TextPart | ImageInputPart>;
}
export interface FunctionCallItem { id: string; type: 'function_call'; call_id: string; name: string; arguments: string; status: 'completed' }
export interface FunctionCallOutputItem { id: string; type: 'function_call_output'; call_id: string; output: string; status: 'completed' }

/** An input item as stored with its response and listed by /input_items. */
export type StoredInputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem;

/**
 * The request's `input` as items: text, or a list of message items with text parts, function calls (an earlier
 * output sent back) and function call outputs (the client's results); anything else is refused by its path.
 */
export function normalizeInput(input: ResponseCreateRequest['input'], taskId: string): StoredInputItem[] {
  if (typeof input === 'string') return [{ id: inputItemIdOf(taskId, 0), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.map((item, index) => normalizeItem(item as Record<string, unknown>, `input[${index}]`, inputItemIdOf(taskId, index)));
}

function normalizeItem(item: Record<string, unknown>, path: string, id: string): StoredInputItem {
  const type = item.type ?? 'message';
  const keys = ITEM_KEYS[String(type)];
  if (!keys) throw badRequest(`${path}.type: ${String(type)} items are not supported (message, function_call and function_call_output are)`);
  for (const key of Object.keys(item)) if (!keys.has(key)) throw badRequest(`unknown field in ${path}: ${key}`);
  if (type === 'function_call') {
    return { id, type, call_id: stringField(item, 'call_id', path), name: stringField(item, 'name', path), arguments: stringField(item, 'arguments', path), status: 'completed' };
  }
  if (type === 'function_call_output') return { id, type, call_id: stringField(item, 'call_id', path), output: stringField(item, 'output', path), status: 'completed' };
  if (!ROLES.includes(item.role as Role)) throw badRequest(`${path}.role must be one of ${ROLES.join(', ')}`);
  const role = item.role as Role;
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  if (typeof item.content === 'string') return { id, type: 'message', role, content: [{ type: textType, text: item.content }] };
  if (!Array.isArray(item.content) || item.content.length === 0) throw badRequest(`${path}.content must be a string or a non-empty list of content parts`);
  return { id, type: 'message', role, content: item.content.map((part, index) => normalizePart(part, `${path}.content[${index}]`, role)) };
}

function stringField(item: Record<string, unknown>, field: string, path: string): string {
  if (typeof item[field] !== 'string') throw badRequest(`${path}.${field} must be a string`);
  return item[field] as string;
}

function normalizePart(part: unknown, path: string, role: Role): MessageItem['content'][number] {
  if (typeof part !== 'object' || part === null) throw badRequest(`${path} must be an object`);
  const { type, text } = part as Record<string, unknown>;
  const keys = typeof type === 'string' ? PART_KEYS[type] : undefined;
  if (!keys) throw badRequest(`${path}.type: ${String(type)} is not supported (input_text, output_text and input_image parts are)`);
  for (const key of Object.keys(part)) if (!keys.has(key)) throw badRequest(`unknown field in ${path}: ${key}`);
  if (type === 'input_image') return imageInputPart(part as Record<string, unknown>, path, role);
  if (typeof text !== 'string') throw badRequest(`${path}.text must be a string`);
  return { type: type as TextPart['type'], text };
}

function imageInputPart(part: Record<string, unknown>, path: string, role: Role): ImageInputPart {
  if (role !== 'user') throw badRequest(`${path}: only user messages carry images`);
  if (part.file_id !== undefined && part.file_id !== null) throw badRequest(`${path}.file_id is not supported: there is no Files API here; send the image as image_url (a data URL or an http(s) address)`);
  if (typeof part.image_url !== 'string') throw badRequest(`${path}.image_url is required: a data URL or an http(s) address`);
  const detail = part.detail ?? 'auto';
  if (typeof detail !== 'string' || !IMAGE_DETAILS.includes(detail)) throw badRequest(`${path}.detail must be one of ${IMAGE_DETAILS.join(', ')}`);
  imagePart(part.image_url, `${path}.image_url`);
  return { type: 'input_image', image_url: part.image_url, detail };
}

/** A message's text: its text parts, joined (its images are not text). */
export const itemText = (item: MessageItem) => item.content.map((part) => (part.type === 'input_image' ? '' : part.text)).join('');

const hasImage = (item: StoredInputItem) => item.type === 'message' && item.content.some((part) => part.type === 'input_image');

/** An answer: its text and the client functions the model called. */
export interface ResponseAnswer { text: string; toolCalls: OpenAiToolCall[] }

/** An earlier response of the chain: what it was asked and what it answered. */
export interface EarlierTurn { taskId: string; input: StoredInputItem[]; answer: ResponseAnswer | null }

export interface ResponseConversation {
  query: string;
  systemPrompt: string | undefined;
  /** Plain user and assistant turns before the query, for the workflows that answer with their own context. */
  history: ConversationMessage[];
  /** The whole conversation as the model gets it in a direct turn (function calls and their outputs included). */
  messages: ModelMessage[];
  /** Function calls or their outputs are part of it: only a direct model turn can carry them. */
  hasFunctionItems: boolean;
  /** A user message carries an image: only a direct model turn, of a vision model, can take it. */
  hasImages: boolean;
}

/** An answer as the items it adds to the conversation (the output items of its response). */
export function answerItems(taskId: string, answer: ResponseAnswer): Array<MessageItem | FunctionCallItem> {
  return [
    ...(answer.text === '' ? [] : [{ id: '', type: 'message' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: answer.text }] }]),
    ...answer.toolCalls.map((call, index): FunctionCallItem => ({
      id: functionCallIdOf(taskId, index), type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed',
    })),
  ];
}

/**
 * What the model is sent: the chain's earlier inputs and answers, then this request's items. The query is the
 * last user message; in a plain turn it must be the last item. `instructions` and this request's system and
 * developer messages are the system prompt; earlier responses' do not carry over (as with the OpenAI API).
 */
export function toConversation(earlier: EarlierTurn[], items: StoredInputItem[], instructions: string | null | undefined): ResponseConversation {
  const isSystemLike = (item: StoredInputItem) => item.type === 'message' && (item.role === 'system' || item.role === 'developer');
  const system = [instructions ?? '', ...items.filter(isSystemLike).map((item) => itemText(item as MessageItem))].filter((text) => text.trim() !== '');
  const entries = [
    ...earlier.flatMap((turn) => [...turn.input, ...(turn.answer ? answerItems(turn.taskId, turn.answer) : [])]),
    ...items,
  ].filter((item) => !isSystemLike(item));
  const hasFunctionItems = entries.some((item) => item.type !== 'message');
  const queryIndex = entries.findLastIndex((item) => item.type === 'message' && item.role === 'user');
  if (queryIndex === -1) throw badRequest('input must include a user message: it is what the model answers');
  if (!hasFunctionItems && queryIndex !== entries.length - 1) throw badRequest('input must end with a user message: it is what the model answers');
  let query = itemText(entries[queryIndex] as MessageItem);
  if (query.trim() === '') {
    if (!hasImage(entries[queryIndex])) throw badRequest('input: the last user message is empty');
    query = IMAGES_ONLY_QUERY;
  }
  return {
    query,
    systemPrompt: system.length === 0 ? undefined : system.join('\n\n'),
    history: entries.slice(0, queryIndex).flatMap((item) => (item.type === 'message' ? [{ role: item.role as 'user' | 'assistant', content: itemText(item) }] : [])),
    messages: toModelMessages(entries),
    hasFunctionItems,
    hasImages: entries.some(hasImage),
  };
}

/** Items as AI SDK messages: consecutive function calls are one assistant message, each output a tool message. */
function toModelMessages(entries: StoredInputItem[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  const toolNames = new Map<string, string>();
  for (const item of entries) {
    if (item.type === 'message' && hasImage(item)) {
      const content = item.content.map((part) => (part.type === 'input_image' ? imagePart(part.image_url, 'image_url', part.detail) : { type: 'text' as const, text: part.text }));
      messages.push({ role: 'user', content });
    } else if (item.type === 'message') {
      messages.push({ role: item.role as 'user' | 'assistant', content: itemText(item) });
    } else if (item.type === 'function_call') {
      toolNames.set(item.call_id, item.name);
      const call = { type: 'tool-call' as const, toolCallId: item.call_id, toolName: item.name, input: parseToolArguments(item.arguments) };
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.content = [...(typeof last.content === 'string' ? (last.content === '' ? [] : [{ type: 'text' as const, text: last.content }]) : last.content), call];
      else messages.push({ role: 'assistant', content: [call] });
    } else {
      const toolName = toolNames.get(item.call_id);
      if (toolName === undefined) throw badRequest(`input: function_call_output ${item.call_id} answers no function call of the conversation`);
      messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: item.call_id, toolName, output: { type: 'text', value: item.output } }] });
    }
  }
  return messages;
}

/** An input item as /input_items lists it (openai `ResponseItem`): assistant messages in the output message shape. */
export function toListedItem(item: StoredInputItem) {
  if (item.type === 'message' && item.role === 'assistant') {
    return { ...item, status: 'completed', content: item.content.map((part) => ({ type: 'output_text', text: (part as TextPart).text, annotations: [] })) };
  }
  if (item.type === 'message' && hasImage(item)) {
    return { ...item, status: 'completed', content: item.content.map((part) => (part.type === 'input_image' ? { ...part, file_id: null } : part)) };
  }
  return item.type === 'message' ? { ...item, status: 'completed' } : item;
}
