import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { findOwnedSession, selectSessionTasks } from './queries.ts';
import { toHistoryItem } from './session-view.ts';

/** GET /api/v1/sessions/{id}/history: every task of the session, oldest first (spec 2.8). */
export async function getSessionHistory(deps: Deps, caller: Caller, sessionId: string) {
  const session = await findOwnedSession(deps.db, caller, sessionId);
  const tasks = await selectSessionTasks(deps.db, session.id);
  return { session_id: session.id, tasks: tasks.map(toHistoryItem), total: tasks.length };
}
