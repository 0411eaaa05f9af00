import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { countSessions, selectSessionSummaries } from './queries.ts';
import { toSessionView } from './session-view.ts';

/** GET /api/v1/sessions: the caller's live sessions, newest first. */
export async function listSessions(deps: Deps, caller: Caller, page: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([selectSessionSummaries(deps.db, caller, page), countSessions(deps.db, caller)]);
  return { sessions: rows.map((row) => toSessionView(row)), total_count: total };
}
