import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { retryUntilDatabaseAnswers } from '../db/retry.ts';
import type { TaskEvent } from './append-event.ts';
import { listenForWakes, type EventHub } from './event-hub.ts';
import { readEventsAfter } from './read-events.ts';

const BATCH = 500;
/** Safety net for a lost notification: look again at least this often while waiting. */
const FALLBACK_POLL_MS = 2_000;

export interface FollowOptions {
  afterSeq: number;
  types?: string[];
  signal: AbortSignal;
  logger: Logger;
}

/**
 * Replays a task's log after the cursor and then follows it live, as one sequence: the same query
 * serves both, so there is no seam where an event could be skipped or repeated. Ends after STREAM_END
 * (which every stream receives, whatever its type filter) or when the signal aborts. While the database
 * cannot be reached the stream stays open (its pings go on) and carries on from its cursor when it answers.
 */
export async function* followTaskEvents(db: Db, hub: EventHub, taskId: string, options: FollowOptions): AsyncGenerator<TaskEvent> {
  let cursor = options.afterSeq;
  if (await hasEndedBefore(db, taskId, cursor)) return;
  const wakes = listenForWakes(hub, taskId, options.signal);
  try {
    for (let first = true; !options.signal.aborted; first = false) {
      if (!first) await wakes.next(FALLBACK_POLL_MS);
      // Read unfiltered: STREAM_END ends every stream and is always delivered, whatever the filter.
      for (;;) {
        const events = await retryUntilDatabaseAnswers(() => readEventsAfter(db, taskId, { afterSeq: cursor, limit: BATCH }), {
          logger: options.logger, what: 'read task events', signal: options.signal,
        }).catch((error: unknown) => {
          if (options.signal.aborted) return [];
          throw error;
        });
        for (const event of events) {
          cursor = event.seq;
          if (!options.types || options.types.includes(event.type) || event.type === 'STREAM_END') yield event;
          if (event.type === 'STREAM_END') return;
        }
        if (events.length < BATCH || options.signal.aborted) break;
      }
    }
  } finally {
    wakes.stop();
  }
}

/** A resume point at or after STREAM_END has nothing left to wait for. */
async function hasEndedBefore(db: Db, taskId: string, cursor: number): Promise<boolean> {
  if (cursor === 0) return false;
  const row = await db.selectFrom('task_events').select('seq')
    .where('task_id', '=', taskId).where('type', '=', 'STREAM_END').where('seq', '<=', cursor)
    .executeTakeFirst();
  return row !== undefined;
}
