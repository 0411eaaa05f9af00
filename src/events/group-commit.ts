import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { retryUntilDatabaseAnswers } from '../db/retry.ts';
import { appendTaskEventBatch, type NewTaskEvent, type TaskAppend, type TaskEvent } from './append-event.ts';
import type { EventHub } from './event-hub.ts';
import { eventAppendDuration, eventBatchAppends, eventBatchEvents } from '../observability/metrics.ts';

export interface GroupCommitter {
  /**
   * Appends the events to the task's log and resolves with them as stored, once committed (their followers
   * woken). Appends of one task submitted one after another commit in that order. Rejects only for a failure
   * of this append itself; an unreachable database is waited out, as the events carry dedupe keys.
   */
  append(taskId: string, events: NewTaskEvent[]): Promise<TaskEvent[]>;
}

export interface GroupCommitOptions {
  db: Db;
  hub?: EventHub;
  logger: Logger;
  /**
   * How long an append that arrives while nothing is being written waits for others. 0 (the default) writes
   * it at the next turn of the event loop: at low load nothing waits, and under load the appends that arrive
   * during one write are gathered into the next anyway.
   */
  delayMs?: number;
  /** A batch holds at most this many appends; a full batch is written without waiting. */
  maxAppends?: number;
  /** Batches of token deltas only commit without waiting for the WAL flush (default false; EVENT_PARTIALS_ASYNC_COMMIT). */
  asyncPartials?: boolean;
}

const DEFAULT_MAX_APPENDS = 100;
const groupedAppendDuration = eventAppendDuration.labels('grouped');

interface PendingAppend extends TaskAppend {
  /** performance.now() when it was submitted: its latency includes the wait for its batch. */
  submittedAt: number;
  /** Ends the append's time under way at the hub (EventHub.appending), once its followers are woken or it failed. */
  done(): void;
  resolve(stored: TaskEvent[]): void;
  reject(error: unknown): void;
}

/**
 * Group commit of event appends: everything submitted while a batch is being written goes out together in
 * the next one, as one transaction and one notification. One batch is in flight at a time, so the appends
 * of a task, kept in submission order within a batch, also commit in order across batches.
 */
export function createGroupCommitter(options: GroupCommitOptions): GroupCommitter {
  const { db, hub, logger } = options;
  const delayMs = options.delayMs ?? 0;
  const maxAppends = options.maxAppends ?? DEFAULT_MAX_APPENDS;
  const asyncPartials = options.asyncPartials ?? false;
  let pending: PendingAppend[] = [];
  let writing = false;
  let cancelWait: (() => void) | undefined;

  const settle = (batch: PendingAppend[], stored: TaskEvent[][]) => {
    // Each task's stored events in commit order (its appends keep their order within a batch), for its followers here.
    const woken = new Map<string, TaskEvent[]>();
    const committedAt = performance.now();
    let events = 0;
    batch.forEach((append, index) => {
      if (stored[index].length > 0) woken.set(append.taskId, [...woken.get(append.taskId) ?? [], ...stored[index]]);
      events += append.events.length;
      groupedAppendDuration.observe((committedAt - append.submittedAt) / 1000);
      append.resolve(stored[index]);
    });
    eventBatchAppends.observe(batch.length);
    eventBatchEvents.observe(events);
    for (const [taskId, committed] of woken) hub?.wake(taskId, committed);
    for (const append of batch) append.done();
  };

  // Never rejects: every append's outcome goes to its own promise.
  const writeBatch = async (batch: PendingAppend[]): Promise<void> => {
    let stored: TaskEvent[][];
    try {
      stored = await retryUntilDatabaseAnswers(() => appendTaskEventBatch(db, batch, { asyncPartials }), { logger, what: 'record task events' });
    } catch (error) {
      if (batch.length === 1) {
        logger.warn({ err: error, task_id: batch[0].taskId }, 'event append failed');
        batch[0].done();
        batch[0].reject(error);
        return;
      }
      // An append failed for good (a constraint, a value Postgres refuses) and took the batch with it: write
      // each half on its own, the first before the second so that every task's appends keep their order,
      // until the failure is isolated to its own append.
      const half = Math.ceil(batch.length / 2);
      await writeBatch(batch.slice(0, half));
      await writeBatch(batch.slice(half));
      return;
    }
    settle(batch, stored);
  };

  const writeNext = async (): Promise<void> => {
    cancelWait?.();
    cancelWait = undefined;
    if (writing || pending.length === 0) return;
    writing = true;
    const batch = pending.slice(0, maxAppends);
    pending = pending.slice(batch.length);
    try {
      await writeBatch(batch);
    } finally {
      writing = false;
    }
    // What arrived meanwhile has waited for a whole write already.
    if (pending.length > 0) void writeNext();
  };

  const schedule = () => {
    if (writing) return;
    if (pending.length >= maxAppends) {
      void writeNext();
    } else if (!cancelWait) {
      // Appends submitted in the same turn of the event loop (timers of many tasks firing together) share a batch.
      if (delayMs === 0) {
        const immediate = setImmediate(writeNext);
        cancelWait = () => clearImmediate(immediate);
      } else {
        const timer = setTimeout(writeNext, delayMs);
        cancelWait = () => clearTimeout(timer);
      }
    }
  };

  return {
    append(taskId, events) {
      if (events.length === 0) return Promise.resolve([]);
      return new Promise<TaskEvent[]>((resolve, reject) => {
        const done = hub?.appending(taskId) ?? (() => {});
        pending.push({ taskId, events, submittedAt: performance.now(), done, resolve, reject });
        schedule();
      });
    },
  };
}
