import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID_PATTERN.test(value);

export interface ResolvedSession {
  id: string;
  externalId: string | null;
  /** What the client should use to continue the conversation: its custom id, or the UUID. */
  publicId: string;
}

export interface SessionDefaults {
  tokenBudget: number;
  ttlDays: number;
  /** The submitting task's context: a new session records its feature flags (spec 2.9). */
  taskContext: Record<string, unknown>;
}

const SESSION_FLAGS = ['role', 'force_research', 'force_swarm', 'research_strategy', 'template'];

function initialContext(defaults: SessionDefaults): Record<string, unknown> {
  return Object.fromEntries(SESSION_FLAGS.filter((key) => defaults.taskContext[key] !== undefined).map((key) => [key, defaults.taskContext[key]]));
}

/**
 * Finds the caller's session for a task or creates it (spec 2.9 dual ids, 4.2 rule 6). A UUID or custom
 * id that belongs to someone else, or to a deleted or expired session, never exposes it: the caller gets a
 * new one.
 */
export async function resolveSessionForTask(db: Db, caller: Caller, requestedId: string | undefined, defaults: SessionDefaults): Promise<ResolvedSession> {
  if (requestedId !== undefined && !isUuid(requestedId)) return upsertExternalSession(db, caller, requestedId, defaults);
  const id = requestedId?.toLowerCase() ?? randomUUID();
  const claimed = await upsertOwnedSession(db, caller, id, defaults);
  if (claimed) return { id, externalId: null, publicId: id };
  const fresh = randomUUID();
  await upsertOwnedSession(db, caller, fresh, defaults);
  return { id: fresh, externalId: null, publicId: fresh };
}

/** Creates the session with this id, or touches it when it is the caller's own live session. */
async function upsertOwnedSession(db: Db, caller: Caller, id: string, defaults: SessionDefaults): Promise<boolean> {
  const { rows } = await sql`
    insert into sessions (id, tenant_id, user_id, token_budget, expires_at, context)
    values (${id}, ${caller.tenantId}, ${caller.userId}, ${defaults.tokenBudget}, now() + make_interval(days => ${defaults.ttlDays}),
            ${JSON.stringify(initialContext(defaults))}::jsonb)
    on conflict (id) do update set updated_at = now(), expires_at = excluded.expires_at
    where sessions.tenant_id = ${caller.tenantId} and sessions.user_id = ${caller.userId}
      and sessions.deleted_at is null and (sessions.expires_at is null or sessions.expires_at > now())
    returning id`.execute(db);
  return rows.length > 0;
}

async function upsertExternalSession(db: Db, caller: Caller, externalId: string, defaults: SessionDefaults): Promise<ResolvedSession> {
  await retireExpiredSession(db, caller, externalId);
  const { rows } = await sql<{ id: string }>`
    insert into sessions (id, tenant_id, user_id, external_id, token_budget, expires_at, context)
    values (${randomUUID()}, ${caller.tenantId}, ${caller.userId}, ${externalId}, ${defaults.tokenBudget},
            now() + make_interval(days => ${defaults.ttlDays}), ${JSON.stringify({ ...initialContext(defaults), external_id: externalId })}::jsonb)
    on conflict (tenant_id, user_id, external_id) where external_id is not null and deleted_at is null
    do update set updated_at = now(), expires_at = excluded.expires_at
    returning id`.execute(db);
  return { id: rows[0].id, externalId, publicId: externalId };
}

/**
 * An expired session is gone for its owner (reads answer 404), so its custom id starts a fresh session.
 * The old row is marked deleted by no one (`deleted_by` null) to free the id for the new one.
 */
async function retireExpiredSession(db: Db, caller: Caller, externalId: string): Promise<void> {
  await db.updateTable('sessions').set({ deleted_at: sql`expires_at` as never })
    .where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId).where('external_id', '=', externalId)
    .where('deleted_at', 'is', null).where('expires_at', '<=', sql<Date>`now()`)
    .execute();
}
