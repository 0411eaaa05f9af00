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

export interface SessionDefaults { tokenBudget: number; ttlDays: number }

/**
 * Finds the caller's session for a task or creates it (spec 2.9 dual ids, 4.2 rule 6). A UUID or custom
 * id that belongs to someone else, or to a deleted session, never exposes it: the caller gets a new one.
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
    insert into sessions (id, tenant_id, user_id, token_budget, expires_at)
    values (${id}, ${caller.tenantId}, ${caller.userId}, ${defaults.tokenBudget}, now() + make_interval(days => ${defaults.ttlDays}))
    on conflict (id) do update set updated_at = now(), expires_at = excluded.expires_at
    where sessions.tenant_id = ${caller.tenantId} and sessions.user_id = ${caller.userId}
      and sessions.deleted_at is null and (sessions.expires_at is null or sessions.expires_at > now())
    returning id`.execute(db);
  return rows.length > 0;
}

async function upsertExternalSession(db: Db, caller: Caller, externalId: string, defaults: SessionDefaults): Promise<ResolvedSession> {
  const { rows } = await sql<{ id: string }>`
    insert into sessions (id, tenant_id, user_id, external_id, token_budget, expires_at, context)
    values (${randomUUID()}, ${caller.tenantId}, ${caller.userId}, ${externalId}, ${defaults.tokenBudget},
            now() + make_interval(days => ${defaults.ttlDays}), jsonb_build_object('external_id', ${externalId}::text))
    on conflict (tenant_id, user_id, external_id) where external_id is not null and deleted_at is null
    do update set updated_at = now(), expires_at = excluded.expires_at
    returning id`.execute(db);
  return { id: rows[0].id, externalId, publicId: externalId };
}
