import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { ensureOwned } from '../auth/ownership.ts';
import { findSessionForDelete, softDeleteSession } from './queries.ts';

/**
 * DELETE /api/v1/sessions/{id}: a soft delete (spec 3.4), idempotent for the owner: deleting a deleted (or
 * expired) session again also succeeds. Another user's deleted session is 404, their live one 403.
 */
export async function deleteSession(deps: Deps, caller: Caller, sessionId: string): Promise<void> {
  const session = await findSessionForDelete(deps.db, caller, sessionId);
  if (session?.deleted_at && session.user_id !== caller.userId) throw notFound('Session not found');
  const owned = ensureOwned(session, caller, 'session');
  await softDeleteSession(deps.db, owned.id, caller.userId);
}
