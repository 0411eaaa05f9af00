import { badRequest } from '../errors.ts';
import type { ConversationMessage, ModelCallSettings } from '../llm/stream-model-text.ts';
import { modelCallSettings } from './call-settings.ts';
import { parseMessages, type TranscriptMessage } from './chat-messages.ts';
import { chatToolSpecs, modelToolChoice, strictFunctionNames } from './client-tools.ts';
import { clientTurnContext, type ClientTurn } from './client-turn.ts';
import { DEFAULT_SERVICE_MODEL, type ServiceModel } from './models.ts';
import type { ChatCompletionRequest } from './schemas.ts';
import { structuredOutputOf } from './structured-output.ts';

export const MAX_TOKENS_CAP = 16_384;

export interface ChatTask {
  query: string;
  systemPrompt: string | undefined;
  /** Plain turns before the last user message except the system prompt, oldest first. */
  history: ConversationMessage[];
  /** Every message but the system prompt, for the session's transcript key (chat-session.ts). */
  transcript: TranscriptMessage[];
  maxTokens: number;
  callSettings: ModelCallSettings;
  /** Set when the request needs a direct model turn (service-chat only): client tools, tool messages, images, a JSON format. */
  turn: ClientTurn | undefined;
  hasImages: boolean;
}

/**
 * Maps a chat request to a task (spec 4.11): the last user message is the query, the first system (or developer)
 * message the system prompt, the others the conversation history. Every field is honoured or refused by name.
 */
export function toChatTask(request: ChatCompletionRequest, model: ServiceModel): ChatTask {
  refuseUnhonouredValues(request);
  const parsed = parseMessages(request.messages);
  const tools = chatToolSpecs(request.tools ?? []);
  const toolChoice = modelToolChoice(request.tool_choice, tools);
  const strict = strictFunctionNames((request.tools ?? []).map((tool) => tool.function));
  const output = structuredOutputOf(request.response_format);
  const needsTurn = tools.length > 0 || output !== undefined || parsed.needsModelTurn;
  if (needsTurn && model.mode !== 'simple') throw badRequest(directTurnRefusal(request, model));
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? model.defaultMaxTokens;
  return {
    query: parsed.query,
    systemPrompt: parsed.systemPrompt,
    history: parsed.history,
    transcript: parsed.transcript,
    maxTokens: Math.min(maxTokens, MAX_TOKENS_CAP),
    callSettings: modelCallSettings(request),
    hasImages: parsed.hasImages,
    turn: needsTurn ? {
      messages: parsed.conversation,
      ...(tools.length > 0 ? { tools, toolChoice } : {}),
      ...(output ? { output } : {}),
      ...(request.parallel_tool_calls === false ? { singleToolCall: true } : {}),
      ...(strict.length > 0 ? { strictTools: strict } : {}),
    } : undefined,
  };
}

/** The fields declared only so that their "off" value passes (schemas.ts): any other value is refused by name. */
function refuseUnhonouredValues(request: ChatCompletionRequest): void {
  if (request.n !== undefined && request.n !== null && request.n !== 1) throw badRequest('n must be 1: only one choice is supported');
  if (request.logprobs === true) throw badRequest('logprobs is not supported: providers behind the gateway do not all report them');
  if (request.top_logprobs !== undefined && request.top_logprobs !== null) throw badRequest('top_logprobs is not supported: logprobs are not reported');
  if (request.logit_bias && Object.keys(request.logit_bias).length > 0) throw badRequest('logit_bias is not supported: token ids differ between the providers behind the gateway');
  if (request.store === true) throw badRequest('store is not supported: completions are kept as tasks (GET /api/v1/tasks/{X-Workflow-ID}), not as stored completions');
  if (request.metadata && Object.keys(request.metadata).length > 0) throw badRequest('metadata is not supported: it tags stored completions, which the gateway does not keep');
  if (request.modalities?.includes('audio')) throw badRequest('modalities: audio output is not supported (text only)');
  if (request.service_tier && !['auto', 'default'].includes(request.service_tier)) throw badRequest(`service_tier ${request.service_tier} is not supported (auto and default are)`);
}

function directTurnRefusal(request: ChatCompletionRequest, model: ServiceModel): string {
  const field = request.tools?.length ? 'tools' : request.response_format ? 'response_format' : 'messages';
  const what = field === 'messages' ? 'tool calls, tool results and images in messages' : field;
  return `${what}: the ${model.id} model runs a workflow with the gateway's own tools and cannot take ${field === 'messages' ? 'them' : 'it'}; `
    + `use ${DEFAULT_SERVICE_MODEL}, which answers in one direct model turn with only the client's tools`;
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
    serverContext: { conversation_history: chat.history, openai_model: model.id, ...clientTurnContext(chat.turn, chat.callSettings) },
  };
}
