import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/database-errors.ts';
import { conflict, serviceUnavailable } from '../errors.ts';
import { EVENTS_CHANNEL, listenForWakes, type EventHub } from '../events/event-hub.ts';
import { uuidFromText } from '../uuid.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request carries an Idempotency-Key: identifies the request for idempotentResourceId. */
    idempotencyScope?: string;
    /** Set when this request holds the claim on its scope and its answer is to be stored. */
    idempotencyClaimed?: boolean;
  }
  interface FastifyContextConfig {
    /**
     * Whether a 2xx answer is stored and replayed for the key (default true). Routes whose answers hold
     * secrets (credentials) or cannot be replayed (streams) say false; idempotentResourceId still works.
     */
    replayAnswer?: boolean | ((request: FastifyRequest) => boolean);
  }
}

/** Headers of a cached answer worth replaying (ids, location, content type). */
const REPLAYED_HEADERS = ['content-type', 'x-workflow-id', 'x-session-id', 'location', 'link', 'etag'];
const WAIT_FOR_FIRST_MS = 30_000;
/** A duplicate is woken when the first answers; it looks again at least this often in case the wake-up was lost. */
const RECHECK_MS = 1_000;

export interface IdempotencyOptions {
  db: Db;
  ttlSeconds: number;
  /** An in-progress record older than this belonged to a request that died; a duplicate may take over. */
  claimTimeoutSeconds: number;
  stopping: AbortSignal;
  /** Wakes waiting duplicates, in any process, when the first request answers. */
  events: EventHub;
}

interface StoredAnswer { state: string; status_code: number | null; headers: Record<string, string> | null; body: string | null }

/**
 * Idempotency for every POST (spec 4.2 rule 5): the first 2xx answer to (key, user, path, body) is
 * stored for the TTL and replayed with `X-Idempotency-Cached: true`. A concurrent duplicate waits for
 * the first to finish instead of running twice; a non-2xx answer is forgotten so a retry runs anew.
 */
export function installIdempotency(app: FastifyInstance, options: IdempotencyOptions): void {
  const { db, ttlSeconds, claimTimeoutSeconds, stopping, events } = options;

  app.addHook('preHandler', async (request, reply) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || typeof key !== 'string' || key === '') return;
    reply.header('x-idempotency-key', key);
    const scope = scopeHash(request, key);
    request.idempotencyScope = scope;
    const replayAnswer = request.routeOptions.config.replayAnswer ?? true;
    if (!(typeof replayAnswer === 'function' ? replayAnswer(request) : replayAnswer)) return;
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    const wakeUps = listenForWakes(events, answerKey(scope));
    try {
      while (Date.now() < deadline) {
        if (stopping.aborted) throw serviceUnavailable('the server is restarting; retry with the same Idempotency-Key', 2);
        if (await claim(db, scope, key, ttlSeconds, claimTimeoutSeconds)) {
          request.idempotencyClaimed = true;
          return;
        }
        const stored = await readStored(db, scope);
        if (stored?.state === 'completed') return replay(reply, stored, key);
        await wakeUps.next(Math.min(RECHECK_MS, deadline - Date.now()));
      }
    } finally {
      wakeUps.stop();
    }
    throw conflict('A request with this Idempotency-Key is still in progress');
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const scope = request.idempotencyScope;
    if (!scope || !request.idempotencyClaimed) return payload;
    // The answer tells what the request did: a database that cannot store it for replays (read-only, out of disk)
    // does not turn a task it created into a 503. The claim then stays in progress, and a retry after
    // IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS runs the handler again, which finds what this one created
    // (idempotentResourceId).
    await storeAnswer(db, scope, reply, payload).catch((error: unknown) => {
      if (!isDatabaseUnavailable(error)) throw error;
      request.log.warn({ err: error }, 'idempotent answer not stored; a retry runs the request again and finds what it created');
    });
    events.wake(answerKey(scope));
    return payload;
  });
}

async function storeAnswer(db: Db, scope: string, reply: FastifyReply, payload: unknown): Promise<void> {
  if (reply.statusCode >= 200 && reply.statusCode < 300) {
    await db.updateTable('idempotency_records').where('scope_hash', '=', scope).set({
      state: 'completed',
      status_code: reply.statusCode,
      headers: JSON.stringify(pickHeaders(reply)),
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    }).execute();
  } else {
    await db.deleteFrom('idempotency_records').where('scope_hash', '=', scope).execute();
  }
  await sql`select pg_notify(${EVENTS_CHANNEL}, ${answerKey(scope)})`.execute(db);
}

const answerKey = (scope: string) => `idempotency:${scope}`;

function scopeHash(request: FastifyRequest, key: string): string {
  return createHash('sha256')
    .update(JSON.stringify([key, request.caller?.tenantId ?? '', request.caller?.userId ?? '', request.url, request.body ?? null]))
    .digest('hex');
}

/**
 * The id of what a request sent with an Idempotency-Key creates: the same for every retry of the request.
 * The claim row and the created row are not written in one transaction, so a retry after a crash (or one
 * that takes over an abandoned claim) runs the handler again; with this id it finds the task the first
 * attempt created instead of creating a second one.
 */
export function idempotentResourceId(request: FastifyRequest): string | undefined {
  const scope = request.idempotencyScope;
  return scope === undefined ? undefined : uuidFromText(`resource:${scope}`);
}

/** Takes the record when it is new, expired, or abandoned by a request that died. */
async function claim(db: Db, scope: string, key: string, ttlSeconds: number, claimTimeoutSeconds: number): Promise<boolean> {
  const { rows } = await sql`
    insert into idempotency_records (scope_hash, idempotency_key, state, expires_at)
    values (${scope}, ${key}, 'in_progress', now() + make_interval(secs => ${ttlSeconds}))
    on conflict (scope_hash) do update set
      state = 'in_progress', status_code = null, headers = null, body = null,
      created_at = now(), expires_at = excluded.expires_at
    where idempotency_records.expires_at < now()
       or (idempotency_records.state = 'in_progress'
           and idempotency_records.created_at < now() - make_interval(secs => ${claimTimeoutSeconds}))
    returning scope_hash`.execute(db);
  return rows.length > 0;
}

async function readStored(db: Db, scope: string): Promise<StoredAnswer | undefined> {
  return db.selectFrom('idempotency_records').select(['state', 'status_code', 'headers', 'body'])
    .where('scope_hash', '=', scope).executeTakeFirst();
}

function replay(reply: FastifyReply, stored: StoredAnswer, key: string): FastifyReply {
  return reply.status(stored.status_code ?? 200)
    .headers({ ...stored.headers, 'x-idempotency-cached': 'true', 'x-idempotency-key': key })
    .send(stored.body ?? '');
}

function pickHeaders(reply: FastifyReply): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) picked[name] = String(value);
  }
  return picked;
}

/** Records past their TTL are never replayed again (a new request takes the key over); this removes them. */
export async function purgeExpiredIdempotencyRecords(db: Db): Promise<void> {
  await db.deleteFrom('idempotency_records').where('expires_at', '<', sql<Date>`now()`).execute();
}
