import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { credentialKey } from '../auth/caller.ts';
import { resolveCaller, type Credential } from '../auth/resolve-credential.ts';
import type { Db } from '../db/database.ts';
import { retryConflicts } from '../db/retry.ts';
import type { Deps } from '../deps.ts';
import { isAppError, tooManyRequests } from '../errors.ts';
import { UNMATCHED_ROUTE } from '../observability/http-metrics.ts';
import { openStreams } from '../observability/metrics.ts';

export interface StreamLease {
  /** Aborted, with the reason as a sentence, once the credential that opened the stream is no longer valid. */
  revoked: AbortSignal;
  release(): void;
}

export interface StreamSlots {
  /** Takes one of the caller's stream slots (429 when none is free) for as long as the connection lasts. */
  open(request: FastifyRequest, reply: FastifyReply): Promise<StreamLease>;
}

/** How often a process renews the leases of its open streams, and how long an unrenewed lease still counts. */
const RENEW_INTERVAL_MS = 15_000;
const LEASE_TTL_SECONDS = 45;
/** The longest one re-check of a credential answers for its other streams (at most half the re-check interval). */
const SHARED_CHECK_MS = 1_000;

type SlotDeps = Pick<Deps, 'db' | 'config' | 'logger'>;

/**
 * Concurrent streams per credential (spec 8: 100 per API key), counted in Postgres across every process:
 * a slot is a lease row, taken under an advisory lock on the credential so two processes cannot both take
 * the last one, and renewed while its connection is open (a process that dies stops renewing, and its
 * leases stop counting). SSE, WebSocket and streaming chat completions share the count. A slot is freed
 * when its connection closes, whether or not a stream was ever served on it, and an open stream re-checks
 * its credential periodically.
 */
export function createStreamSlots(deps: SlotDeps): StreamSlots {
  const { maxPerKey, credentialCheckMs } = deps.config.streams;
  const held = new Set<string>();
  const renew = setInterval(() => void renewLeases(deps, held), RENEW_INTERVAL_MS);
  renew.unref();
  const checkCredential = sharedCredentialChecks(deps, Math.min(SHARED_CHECK_MS, credentialCheckMs / 2));
  const free = leaseFreeing(deps);

  return {
    async open(request, reply) {
      const leaseId = await takeLease(deps.db, credentialKey(request.caller), maxPerKey);
      held.add(leaseId);
      const streamLabels = { route: request.routeOptions.url ?? UNMATCHED_ROUTE };
      openStreams.inc(streamLabels);
      const revoked = new AbortController();
      const recheck = setInterval(() => void recheckCredential(request, revoked, checkCredential), credentialCheckMs);
      recheck.unref();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        openStreams.dec(streamLabels);
        clearInterval(recheck);
        held.delete(leaseId);
        free(leaseId);
      };
      // An upgraded WebSocket lives on the socket; any other request ends with its response.
      (request.ws ? request.raw.socket : reply.raw).once('close', release);
      if (request.raw.socket.destroyed) release();
      return { revoked: revoked.signal, release };
    },
  };
}

/** One statement (migration 0036): the credential's lock is held for the count and the insert only, not across round trips. */
async function takeLease(db: Db, key: string, maxPerKey: number): Promise<string> {
  const id = randomUUID();
  const { rows } = await retryConflicts(() => sql<{ taken: boolean }>`
    select take_stream_lease(${id}::uuid, ${key}, ${maxPerKey}::integer, ${LEASE_TTL_SECONDS}::integer) as taken`.execute(db));
  if (!rows[0].taken) throw tooManyRequests(5, `Too many concurrent streams (at most ${maxPerKey} per API key)`);
  return id;
}

/**
 * Frees leases together: the ones released in one turn of the event loop go in one statement. The streams of a task
 * end in the same turn as it does, and with a statement each, a task with 5,000 streams sent 5,000 at once.
 */
function leaseFreeing(deps: SlotDeps): (leaseId: string) => void {
  let released: string[] = [];
  const freeReleased = () => {
    const ids = released;
    released = [];
    sql`delete from stream_leases where id = any(${ids}::uuid[])`.execute(deps.db)
      .catch((error: unknown) => deps.logger.warn({ err: error, leases: ids.length }, 'could not free stream slots; they lapse unrenewed'));
  };
  return (leaseId) => {
    released.push(leaseId);
    if (released.length === 1) setImmediate(freeReleased);
  };
}

/** Keeps this process's leases counting, and clears the leases of processes that died. */
async function renewLeases(deps: SlotDeps, held: Set<string>): Promise<void> {
  try {
    if (held.size > 0) await deps.db.updateTable('stream_leases').set({ renewed_at: sql`now()` as never }).where('id', 'in', [...held]).execute();
    await sql`delete from stream_leases where renewed_at < now() - make_interval(secs => ${LEASE_TTL_SECONDS * 4})`.execute(deps.db);
  } catch (error) {
    deps.logger.warn({ err: error }, 'could not renew stream slots');
  }
}

async function recheckCredential(request: FastifyRequest, revoked: AbortController, check: CredentialCheck): Promise<void> {
  if (!request.credential || revoked.signal.aborted) return;
  const refusal = await check(request.credential, request.caller.tenantId);
  if (refusal !== undefined) revoked.abort(`the credential of this stream is no longer valid: ${refusal}`);
}

/** Why a credential is no longer valid for its tenant, or undefined while it is (or the database does not answer). */
type CredentialCheck = (credential: Credential, tenantId: string) => Promise<string | undefined>;

/**
 * The streams of one credential share its re-checks: a check answers for every stream whose timer fires within
 * `shareMs` of it, so 5,000 streams of one key re-checked every 30 s cost about one query a second, not 170.
 */
function sharedCredentialChecks(deps: SlotDeps, shareMs: number): CredentialCheck {
  const recent = new Map<string, Promise<string | undefined>>();
  return (credential, tenantId) => {
    const key = `${credential.kind} ${tenantId} ${credential.value}`;
    let check = recent.get(key);
    if (check === undefined) {
      check = checkOnce(deps, credential, tenantId);
      recent.set(key, check);
      setTimeout(() => recent.delete(key), shareMs).unref();
    }
    return check;
  };
}

async function checkOnce(deps: SlotDeps, credential: Credential, tenantId: string): Promise<string | undefined> {
  try {
    await resolveCaller(deps.db, deps.config, credential, tenantId);
    return undefined;
  } catch (error) {
    if (isAppError(error)) return error.message;
    // A database that does not answer says nothing about the credential: the streams go on.
    deps.logger.warn({ err: error }, 'could not re-check a stream credential');
    return undefined;
  }
}
