import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { withPayloadWhenPresent } from '../events/event-record.ts';
import { countEventsAfter, readEventsAfter } from '../events/read-events.ts';
import { findOwnedTask } from './queries.ts';

export interface EventHistoryQuery {
  limit: number;
  offset: number;
  after_seq: number;
  include_partial: boolean;
}

/** GET /api/v1/tasks/{id}/events: the persistent log, paged by offset or by an `after_seq` cursor. */
export async function getEventHistory(deps: Deps, caller: Caller, taskId: string, query: EventHistoryQuery) {
  const task = await findOwnedTask(deps.db, caller, taskId);
  const filter = { afterSeq: query.after_seq, includePartial: query.include_partial };
  const [events, total] = await Promise.all([
    readEventsAfter(deps.db, task.id, { ...filter, limit: query.limit, offset: query.offset }),
    countEventsAfter(deps.db, task.id, filter),
  ]);
  const hasMore = query.offset + events.length < total;
  return {
    workflow_id: task.id,
    events: events.map(withPayloadWhenPresent),
    count: events.length,
    total_count: total,
    has_more: hasMore,
    next_after_seq: hasMore && events.length > 0 ? events.at(-1)!.seq : null,
  };
}
