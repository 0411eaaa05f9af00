import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { isUuid } from './resolve-session.ts';

/** PUT /api/v1/sessions/{id}/budget: raises (or lowers) the session's token budget. */
export async function setSessionBudget(deps: Deps, caller: Caller, sessionId: string, tokenBudget: number) {
  const session = await deps.db.updateTable('sessions').set({ token_budget: tokenBudget, updated_at: sql`now()` as never })
    .where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId).where('deleted_at', 'is', null)
    .where((eb) => isUuid(sessionId) ? eb('id', '=', sessionId.toLowerCase()) : eb('external_id', '=', sessionId))
    .returning(['id', 'token_budget']).executeTakeFirst();
  if (!session) throw notFound('Session not found');
  const { rows } = await sql<{ used: number }>`select coalesce(sum(total_tokens), 0)::bigint as used from usage_records where session_id = ${session.id}`.execute(deps.db);
  return { session_id: sessionId, token_budget: Number(session.token_budget), tokens_used: Number(rows[0].used) };
}

