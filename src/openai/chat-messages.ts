import type { ModelMessage } from 'ai';
import { badRequest } from '../errors.ts';
import type { ConversationMessage } from '../llm/stream-model-text.ts';
import { parseToolArguments, type OpenAiToolCall } from './client-tools.ts';
import type { ChatMessage } from './schemas.ts';
import { IMAGES_ONLY_QUERY, imagePart } from './vision.ts';

/** What a message is for the session's transcript key (chat-session.ts): its role and a text that stands for it. */
export type TranscriptMessage = { role: string; content: string };

export interface ParsedMessages {
  /** The first system (or developer) message. */
  systemPrompt: string | undefined;
  /** The last user message's text: the task's query. */
  query: string;
  /** Every message but the first system one, as the model gets it (tool calls, tool results and images included). */
  conversation: ModelMessage[];
  /** Plain user and assistant turns before the query, for requests the workflows answer with their own context. */
  history: ConversationMessage[];
  /** Every message but the first system one, as text, for the transcript key. */
  transcript: TranscriptMessage[];
  /** Something only a direct model turn can carry: tool calls, tool results or images. */
  needsModelTurn: boolean;
  hasImages: boolean;
}

type Part = Exclude<ChatMessage['content'], string | null | undefined>[number];

/**
 * The messages of a request (spec 4.11 mapping): the last user message is the query, the first system message the
 * system prompt, the rest the conversation. `developer` is `system` (current OpenAI clients send it instead).
 * Each role's fields are checked here, naming the message: a field a role does not take is a 400, never dropped.
 */
export function parseMessages(messages: ChatMessage[]): ParsedMessages {
  const roles = messages.map((message) => (message.role === 'developer' ? 'system' : message.role));
  const queryIndex = roles.lastIndexOf('user');
  if (queryIndex === -1) throw badRequest('messages must include a user message');
  const systemIndex = roles.indexOf('system');
  const toolNames = new Map<string, string>();
  const conversation: ModelMessage[] = [];
  const transcript: TranscriptMessage[] = [];
  let needsModelTurn = false;
  let hasImages = false;
  for (const [index, message] of messages.entries()) {
    checkFields(message, index);
    if (index === systemIndex) continue;
    const converted = toModelMessage(message, roles[index], index, toolNames);
    conversation.push(converted.message);
    transcript.push(converted.transcript);
    needsModelTurn ||= converted.needsModelTurn;
    hasImages ||= converted.hasImages;
  }
  const queryContent = messages[queryIndex].content;
  const queryHasImages = Array.isArray(queryContent) && queryContent.some((part) => part.type === 'image_url');
  let query = textOf(queryContent);
  if (query.trim() === '') {
    if (!queryHasImages) throw badRequest('the last user message is empty');
    query = IMAGES_ONLY_QUERY;
  }
  const history = messages.slice(0, queryIndex).flatMap((message, index): ConversationMessage[] =>
    (index === systemIndex || (message.role !== 'user' && message.role !== 'assistant') ? [] : [{ role: message.role, content: textOf(message.content) }]));
  return {
    systemPrompt: systemIndex === -1 ? undefined : textOf(messages[systemIndex].content),
    query, conversation, history, transcript, needsModelTurn, hasImages,
  };
}

/** Fields a role does not take are refused by name. */
function checkFields(message: ChatMessage, index: number): void {
  const at = `messages.${index}`;
  if (message.tool_calls !== undefined && message.role !== 'assistant') throw badRequest(`${at}.tool_calls: only assistant messages carry tool calls`);
  if (message.tool_call_id !== undefined && message.role !== 'tool') throw badRequest(`${at}.tool_call_id: only tool messages answer a tool call`);
  if (message.role === 'tool' && message.tool_call_id === undefined) throw badRequest(`${at}.tool_call_id is required for a tool message`);
  const content = message.content;
  const hasContent = content !== undefined && content !== null;
  if (!hasContent && !(message.role === 'assistant' && message.tool_calls?.length)) throw badRequest(`${at}.content is required`);
  for (const [partIndex, part] of (Array.isArray(content) ? content : []).entries()) checkPart(part, message.role, `${at}.content.${partIndex}`);
}

function checkPart(part: Part, role: ChatMessage['role'], at: string): void {
  if (part.type === 'input_audio' || part.type === 'file') throw badRequest(`${at}: ${part.type} content parts are not supported (text and image_url are)`);
  if (part.type === 'image_url' && role !== 'user') throw badRequest(`${at}: only user messages carry images`);
  if (part.type === 'refusal' && role !== 'assistant') throw badRequest(`${at}: only assistant messages carry refusals`);
  if (part.role !== undefined && part.role !== role) throw badRequest(`${at}.role: ${part.role} is not the role of its message (${role})`);
  const field = part.type === 'text' ? 'text' : part.type;
  if (part[field] === undefined || part[field] === null) throw badRequest(`${at}.${field} is required`);
  // null asks for nothing (`refusal: null` on a text part); any other value of another kind's field is refused.
  const stray = (['text', 'image_url', 'refusal', 'input_audio', 'file'] as const).find((key) => key !== field && part[key] !== undefined && part[key] !== null);
  if (stray) throw badRequest(`${at}.${stray}: not a field of a ${part.type} part`);
}

type Converted = { message: ModelMessage; transcript: TranscriptMessage; needsModelTurn: boolean; hasImages: boolean };

function toModelMessage(message: ChatMessage, role: string, index: number, toolNames: Map<string, string>): Converted {
  const plain = (text: string): Converted => ({ message: { role: role as 'system' | 'user' | 'assistant', content: text }, transcript: { role, content: text }, needsModelTurn: false, hasImages: false });
  if (role === 'tool') return toolResult(message, index, toolNames);
  if (role === 'assistant' && message.tool_calls?.length) return assistantToolCalls(message, index, toolNames);
  if (role === 'user' && Array.isArray(message.content) && message.content.some((part) => part.type === 'image_url')) return userWithImages(message.content, index);
  return plain(textOf(message.content));
}

function toolResult(message: ChatMessage, index: number, toolNames: Map<string, string>): Converted {
  const id = message.tool_call_id!;
  const toolName = toolNames.get(id);
  if (toolName === undefined) throw badRequest(`messages.${index}.tool_call_id ${id} answers no tool call of an earlier assistant message`);
  const text = textOf(message.content);
  return {
    message: { role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName, output: { type: 'text', value: text } }] },
    transcript: { role: 'tool', content: `${id}:${text}` },
    needsModelTurn: true, hasImages: false,
  };
}

function assistantToolCalls(message: ChatMessage, index: number, toolNames: Map<string, string>): Converted {
  const text = message.content === undefined || message.content === null ? '' : textOf(message.content);
  const calls = message.tool_calls!.map((call) => {
    toolNames.set(call.id, call.function.name);
    return { type: 'tool-call' as const, toolCallId: call.id, toolName: call.function.name, input: parseToolArguments(call.function.arguments) };
  });
  return {
    message: { role: 'assistant', content: [...(text === '' ? [] : [{ type: 'text' as const, text }]), ...calls] },
    transcript: assistantTranscript(text, message.tool_calls!),
    needsModelTurn: true, hasImages: false,
  };
}

/**
 * An answer as its transcript message; with tool calls, their arguments as parsed, so a client that re-serialises
 * them (other spacing) still continues its session.
 */
export function assistantTranscript(text: string, toolCalls: OpenAiToolCall[] = []): TranscriptMessage {
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  const calls = toolCalls.map((call) => [call.id, call.function.name, parseToolArguments(call.function.arguments)]);
  return { role: 'assistant', content: `${text}\n${JSON.stringify(calls)}` };
}

function userWithImages(parts: Part[], index: number): Converted {
  const content = parts.map((part, partIndex) => (part.type === 'image_url'
    ? imagePart(part.image_url!.url, `messages.${index}.content.${partIndex}.image_url.url`, part.image_url!.detail)
    : { type: 'text' as const, text: part.text ?? '' }));
  const text = parts.map((part) => (part.type === 'image_url' ? `[image ${part.image_url!.url}]` : part.text ?? '')).join('');
  return { message: { role: 'user', content }, transcript: { role: 'user', content: text }, needsModelTurn: true, hasImages: true };
}

/** The text of a message's content; a refusal part counts as its text. */
function textOf(content: ChatMessage['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  // Images are refused outside user messages (checkPart); their text is the text parts'.
  return content.map((part) => part.text ?? part.refusal ?? '').join('');
}
