import type { FastifyReply } from 'fastify';
import { credentialKey, type Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { tooManyRequests } from '../errors.ts';
import { countHit, peekHits, secondsUntilReset } from '../http/fixed-window.ts';

const WINDOW_SECONDS = 60;

/**
 * OpenAI-layer limits (spec 8): requests and tokens per minute, per key and per model, counted in
 * Postgres like the native limit. Tokens are charged when a completion finishes; a request starts only
 * while the minute's tokens are below the limit. Development (skip-auth) has no key and no limit.
 */
export async function checkChatLimits(deps: Deps, caller: Caller, model: string, reply: FastifyReply): Promise<(tokens: number) => Promise<void>> {
  if (caller.authMethod === 'development') return async () => {};
  const { requestsPerMinute, tokensPerMinute } = deps.config.openai;
  const key = `openai:${credentialKey(caller)}:${model}`;
  const requests = await countHit(deps.db, `${key}:requests`, WINDOW_SECONDS);
  const tokens = await peekHits(deps.db, `${key}:tokens`, WINDOW_SECONDS);
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
