import { badRequest } from '../errors.ts';
import { modelCallSettings } from './call-settings.ts';
import { MAX_TOKENS_CAP, type ChatTask } from './chat-task.ts';
import { isEmptyObject, never, refuseFields, type FieldCheck } from './refuse-fields.ts';
import type { TextCompletionRequest } from './schemas.ts';

/** OpenAI's own default for a text completion that names no max_tokens. */
const DEFAULT_MAX_TOKENS = 16;

/** Fields of the legacy completions request this layer cannot honour, at the values that ask for something. */
const CHECKS: Record<string, FieldCheck> = {
  messages: { isNoOp: never, why: 'is not taken by /v1/completions, which continues a prompt: send a conversation to /v1/chat/completions' },
  suffix: { isNoOp: (value) => value === '', why: 'is not supported: the models behind the gateway answer chats and cannot fill in text before a suffix' },
  logprobs: { isNoOp: never, why: 'is not supported: providers behind the gateway do not all report log probabilities' },
  n: { isNoOp: (value) => value === 1, why: 'must be 1: only one choice is supported' },
  best_of: { isNoOp: (value) => value === 1, why: 'must be 1: one completion is made per request' },
  logit_bias: { isNoOp: isEmptyObject, why: 'is not supported: token ids differ between the providers behind the gateway' },
};

export const refuseTextCompletionFields = (body: unknown) => refuseFields(body, CHECKS);

/**
 * A text completion as a task (spec 4.11's mapping, for the legacy API): the prompt is the query, a user turn
 * with no system prompt of the client's and no history; its sampling fields and max_tokens (16 unless named, as
 * OpenAI's) are the model call's.
 */
export function toTextTask(body: TextCompletionRequest): ChatTask {
  const prompt = promptOf(body.prompt);
  return {
    query: prompt,
    systemPrompt: undefined,
    history: [],
    transcript: [{ role: 'user', content: prompt }],
    maxTokens: Math.min(body.max_tokens ?? DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP),
    callSettings: modelCallSettings(body),
    turn: undefined,
    hasImages: false,
  };
}

/** The one text prompt of the request: a string, or a list holding one; other forms are refused, saying why. */
function promptOf(prompt: TextCompletionRequest['prompt']): string {
  if (prompt === null) throw badRequest('prompt must be text: a null prompt (an unprompted completion) is not supported');
  if (Array.isArray(prompt)) {
    if (prompt.some((entry) => typeof entry === 'number' || Array.isArray(entry))) {
      throw badRequest('prompt must be text: token ids are not supported, as they differ between the providers behind the gateway');
    }
    if (!prompt.every((entry) => typeof entry === 'string')) throw badRequest('prompt must be a string or a list of strings');
    if (prompt.length > 1) throw badRequest(`prompt: one prompt per request is supported (a list of ${prompt.length} was sent)`);
    return promptOf(prompt[0] as string);
  }
  if (prompt.trim() === '') throw badRequest('prompt must not be empty');
  return prompt;
}
