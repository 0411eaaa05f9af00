import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { retryUntilDatabaseAnswers } from '../db/retry.ts';
import type { TaskEvent } from './append-event.ts';
import type { EventHub } from './event-hub.ts';
import { readEventsAfter } from './read-events.ts';
import { createTaskFeeds, type DeliverBatch, type FeedFollowOptions, type TaskFeeds } from './task-feed.ts';

export interface FollowOptions {
  afterSeq: number;
  types?: string[];
  signal: AbortSignal;
  logger: Logger;
}

/**
 * Replays a task's log after the cursor and then follows it live, as one sequence: replay and live
 * reading are the same query after the stream's cursor (the live one shared by the process's streams of
 * the task, see task-feed.ts), so there is no seam where an event could be skipped or repeated. Ends after
 * STREAM_END (which every stream receives, whatever its type filter) or when the signal aborts. While the
 * database cannot be reached the stream stays open (its pings go on) and carries on from its cursor when it answers.
 */
export function followTaskEvents(db: Db, hub: EventHub, taskId: string, options: FollowOptions): AsyncGenerator<TaskEvent> {
  return feedsOf(db, hub, options.logger).follow(taskId, followingFrom(db, taskId, options));
}

/**
 * followTaskEvents by the batch that became readable at once (never empty), pushed to `deliver` from the wake-up
 * that reads them (TaskFeeds.deliverBatches): the native SSE and WebSocket streams' path, where a wake-up of a task
 * followed by thousands of streams writes them all in one loop.
 */
export function deliverTaskEventBatches(db: Db, hub: EventHub, taskId: string, options: FollowOptions, deliver: DeliverBatch): Promise<void> {
  return feedsOf(db, hub, options.logger).deliverBatches(taskId, followingFrom(db, taskId, options), deliver);
}

const followingFrom = (db: Db, taskId: string, { afterSeq, types, signal }: FollowOptions): FeedFollowOptions => ({
  afterSeq, types, signal, hasEndedBefore: () => hasEndedBefore(db, taskId, afterSeq),
});

/** The hub is the process's one listener, so the process's feeds are kept with it. */
const feedsByHub = new WeakMap<EventHub, TaskFeeds>();

function feedsOf(db: Db, hub: EventHub, logger: Logger): TaskFeeds {
  let feeds = feedsByHub.get(hub);
  if (!feeds) {
    feeds = createTaskFeeds(hub, (taskId, afterSeq, limit, signal) =>
      retryUntilDatabaseAnswers(() => readEventsAfter(db, taskId, { afterSeq, limit }), { logger, what: 'read task events', signal })
        .catch((error: unknown) => {
          if (signal.aborted) return [];
          throw error;
        }));
    feedsByHub.set(hub, feeds);
  }
  return feeds;
}

/** A resume point at or after STREAM_END has nothing left to wait for. */
async function hasEndedBefore(db: Db, taskId: string, cursor: number): Promise<boolean> {
  if (cursor === 0) return false;
  const row = await db.selectFrom('task_events').select('seq')
    .where('task_id', '=', taskId).where('type', '=', 'STREAM_END').where('seq', '<=', cursor)
    .executeTakeFirst();
  return row !== undefined;
}
