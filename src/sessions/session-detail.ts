import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { findOwnedSession, selectSessionSummaries } from './queries.ts';
import { toSessionView } from './session-view.ts';

/** GET /api/v1/sessions/{id}: the detail fields of spec 2.9 with the summary's computed ones. */
export async function getSessionDetail(deps: Deps, caller: Caller, sessionId: string) {
  const session = await findOwnedSession(deps.db, caller, sessionId);
  const [row] = await selectSessionSummaries(deps.db, caller, { limit: 1, offset: 0, sessionId: session.id });
  if (!row) throw notFound('Session not found');
  return toSessionView(row);
}
