import type { FastifyReply, FastifyRequest } from 'fastify';
import { credentialKey } from '../auth/caller.ts';
import { resolveCaller } from '../auth/resolve-credential.ts';
import type { Deps } from '../deps.ts';
import { isAppError, tooManyRequests } from '../errors.ts';

export interface StreamLease {
  /** Aborted, with the reason as a sentence, once the credential that opened the stream is no longer valid. */
  revoked: AbortSignal;
  release(): void;
}

export interface StreamSlots {
  /** Takes one of the caller's stream slots (429 when none is free) for as long as the connection lasts. */
  open(request: FastifyRequest, reply: FastifyReply): StreamLease;
}

/**
 * Concurrent streams per credential (spec 8: 100 per API key), counted in this process: a stream is
 * bound to the process serving it, so the count lives where the connection does. SSE, WebSocket and
 * streaming chat completions share the count. A slot is freed when its connection closes, whether or
 * not a stream was ever served on it, and an open stream re-checks its credential periodically.
 */
export function createStreamSlots(deps: Pick<Deps, 'db' | 'config' | 'logger'>): StreamSlots {
  const open = new Map<string, number>();
  const { maxPerKey, credentialCheckMs } = deps.config.streams;

  const take = (key: string) => {
    const count = open.get(key) ?? 0;
    if (count >= maxPerKey) throw tooManyRequests(5, `Too many concurrent streams (at most ${maxPerKey} per API key)`);
    open.set(key, count + 1);
  };
  const give = (key: string) => {
    const remaining = (open.get(key) ?? 1) - 1;
    if (remaining <= 0) open.delete(key);
    else open.set(key, remaining);
  };

  return {
    open(request, reply) {
      const key = credentialKey(request.caller);
      take(key);
      const revoked = new AbortController();
      const recheck = setInterval(() => void checkCredential(deps, request, revoked), credentialCheckMs);
      recheck.unref();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        clearInterval(recheck);
        give(key);
      };
      // An upgraded WebSocket lives on the socket; any other request ends with its response.
      (request.ws ? request.raw.socket : reply.raw).once('close', release);
      return { revoked: revoked.signal, release };
    },
  };
}

async function checkCredential(deps: Pick<Deps, 'db' | 'config' | 'logger'>, request: FastifyRequest, revoked: AbortController): Promise<void> {
  if (!request.credential || revoked.signal.aborted) return;
  try {
    await resolveCaller(deps.db, deps.config, request.credential, request.caller.tenantId);
  } catch (error) {
    // A database that does not answer says nothing about the credential: the stream goes on.
    if (isAppError(error)) revoked.abort(`the credential of this stream is no longer valid: ${error.message}`);
    else deps.logger.warn({ err: error }, 'could not re-check a stream credential');
  }
}
