import type { FastifyReply, FastifyRequest } from 'fastify';
import { credentialKey, type Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { tooManyRequests } from '../errors.ts';
import { countHit, peekHits, secondsUntilReset } from '../http/fixed-window.ts';
import type { StreamLease } from '../streaming/stream-slots.ts';

const WINDOW_SECONDS = 60;

/**
 * OpenAI-layer limits (spec 8): requests and tokens per minute, per key and per model, counted in
 * Postgres like the native limit. Tokens are charged when a completion finishes; a request starts only
 * while the minute's tokens are below the limit. Development (skip-auth) has no key and no limit.
 */
async function checkChatLimits(deps: Deps, caller: Caller, model: string, reply: FastifyReply): Promise<(tokens: number) => Promise<void>> {
  if (caller.authMethod === 'development') return async () => {};
  const { requestsPerMinute, tokensPerMinute } = deps.config.openai;
  const key = `openai:${credentialKey(caller)}:${model}`;
  // Two windows, two statements on two connections: side by side, a round trip fewer before the first token.
  const [requests, tokens] = await Promise.all([countHit(deps.db, `${key}:requests`, WINDOW_SECONDS), peekHits(deps.db, `${key}:tokens`, WINDOW_SECONDS)]);
  reply.headers({
    'x-ratelimit-limit-requests': String(requestsPerMinute),
    'x-ratelimit-remaining-requests': String(Math.max(0, requestsPerMinute - requests.count)),
    'x-ratelimit-limit-tokens': String(tokensPerMinute),
    'x-ratelimit-remaining-tokens': String(Math.max(0, tokensPerMinute - tokens)),
    'x-ratelimit-reset-requests': `${secondsUntilReset(requests)}s`,
  });
  const retryAfter = secondsUntilReset(requests);
  if (requests.count > requestsPerMinute) throw tooManyRequests(retryAfter, `Rate limit exceeded: ${requestsPerMinute} requests per minute for ${model}`);
  if (tokens >= tokensPerMinute) throw tooManyRequests(retryAfter, `Rate limit exceeded: ${tokensPerMinute} tokens per minute for ${model}`);
  return async (used) => { if (used > 0) await countHit(deps.db, `${key}:tokens`, WINDOW_SECONDS, used); };
}

export interface Admission<T> {
  /** Charges the tokens the answer used to the key's minute. */
  chargeTokens: (tokens: number) => Promise<void>;
  /** The stream slot of a streamed answer. */
  lease: StreamLease | undefined;
  /** What `lookup` found. */
  found: T;
}

/**
 * Admits a request for a model's answer: the request's own lookup (the conversation it continues), the key's request and
 * token limits, and a stream slot when it streams, side by side: each is a round trip or two and none needs another's
 * answer, so the first token comes that much sooner. Refusals come in that order, as if they had run in turn; a slot
 * taken for a request refused is freed as its response closes, like any slot.
 */
export async function admitModelRequest<T>(deps: Deps, request: FastifyRequest, reply: FastifyReply, options: { modelId: string; stream: boolean; lookup: () => Promise<T> }): Promise<Admission<T>> {
  const [found, limits, slot] = await Promise.allSettled([
    options.lookup(),
    checkChatLimits(deps, request.caller, options.modelId, reply),
    options.stream ? deps.streamSlots.open(request, reply) : Promise.resolve(undefined),
  ]);
  if (found.status === 'rejected') throw found.reason;
  if (limits.status === 'rejected') throw limits.reason;
  if (slot.status === 'rejected') throw slot.reason;
  return { chargeTokens: limits.value, lease: slot.value, found: found.value };
}
