import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { AppError, notFound } from '../errors.ts';
import { countSessionTasks, findLiveSession, selectSessionTasks, selectTurnEvents } from './queries.ts';
import { toPageEnd, toTurn } from './session-view.ts';

/** One page never carries more events than this (the reference answers 413 above 5,000 too). */
const MAX_PAGE_EVENTS = 5_000;

/**
 * GET /api/v1/sessions/{id}/events: a page of the session's tasks as turns, oldest first; `count` is all turns.
 * Unlike the other session routes, another user's session is 404 here, not 403 (spec 4.6).
 */
export async function listSessionTurns(deps: Deps, caller: Caller, sessionId: string, page: { limit: number; offset: number }) {
  const session = await findLiveSession(deps.db, caller, sessionId);
  if (!session || session.user_id !== caller.userId) throw notFound('Session not found');
  const [tasks, count] = await Promise.all([selectSessionTasks(deps.db, session.id, page, 'turn'), countSessionTasks(deps.db, session.id)]);
  const events = await selectTurnEvents(deps.db, tasks, MAX_PAGE_EVENTS + 1);
  if (events.length > MAX_PAGE_EVENTS) {
    throw new AppError(413, `these turns hold more than ${MAX_PAGE_EVENTS} events: ask for fewer with limit`);
  }
  const eventsByTask = Map.groupBy(events, (event) => event.workflow_id);
  return {
    session_id: session.id,
    count,
    turns: tasks.map((task, index) => toTurn(task, page.offset + index + 1, eventsByTask.get(task.id) ?? [])),
    ...toPageEnd(page.offset + tasks.length, count),
  };
}
