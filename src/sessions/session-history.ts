import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { countSessionTasks, findOwnedSession, selectSessionTasks } from './queries.ts';
import { toHistoryItem, toPageEnd } from './session-view.ts';

/** GET /api/v1/sessions/{id}/history: one page of the session's tasks, oldest first (spec 2.8); `total` is all of them. */
export async function getSessionHistory(deps: Deps, caller: Caller, sessionId: string, page: { limit: number; offset: number }) {
  const session = await findOwnedSession(deps.db, caller, sessionId);
  const [tasks, total] = await Promise.all([
    selectSessionTasks(deps.db, session.id, page, 'history-item'),
    countSessionTasks(deps.db, session.id),
  ]);
  return { session_id: session.id, tasks: tasks.map(toHistoryItem), total, ...page, ...toPageEnd(page.offset + tasks.length, total) };
}
