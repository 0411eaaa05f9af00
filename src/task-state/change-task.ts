import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { retryConflicts, retryUntilDatabaseAnswers } from '../db/retry.ts';
import type { TaskRow } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { appendTaskEvents, type AlongsideWrite, type NewTaskEvent, type TaskEvent } from '../events/append-event.ts';
import type { EventHub } from '../events/event-hub.ts';
import type { GroupCommitter } from '../events/group-commit.ts';
import { tasksFinished, UNROUTED_MODE } from '../observability/metrics.ts';
import { endingIn } from './lifecycle.ts';
import { isTerminal, TERMINAL_STATUSES } from './statuses.ts';

export interface TaskStateDeps {
  db: Db;
  events: EventHub;
  appends: GroupCommitter;
  logger: Logger;
}

/**
 * Who waits for the change. `request`: a client; a lost deadlock race is retried, an unreachable database
 * fails the call at once (503). `workflow`: a durable step whose change is idempotent (it decides from the row
 * it locked, and its events carry dedupe keys), so it also waits for an unreachable database to come back.
 */
export type Waiter = 'request' | 'workflow';

export interface TaskChange<T> {
  events?: NewTaskEvent[];
  /** Writes made with the events, in their statement: nothing in the change may read what they write. */
  alongside?: AlongsideWrite[];
  result?: T;
}

/**
 * The one way task state changes: lock the task row, let `change` update it, append the events it returns,
 * commit, then wake the task's followers. Taking the row before the event cursor, always, is the lock order
 * that keeps state changes and event writes of the same task from deadlocking (see migration 0007).
 * `lock`: how the row is taken, when not alone (a change that reserves tokens locks the session's row too, after the
 * task's: token-budget.ts lockForCall).
 */
export async function changeTask<T = undefined>(
  deps: TaskStateDeps, taskId: string, waiter: Waiter,
  change: (transaction: Db, task: TaskRow) => Promise<TaskChange<T> | undefined>,
  { lock = lockTaskRow }: { lock?: TaskLock } = {},
): Promise<T | undefined> {
  const attempt = () => deps.db.transaction().execute(async (transaction) => {
    const task = await lock(transaction, taskId);
    if (!task) throw notFound('Task not found');
    const outcome = await change(transaction, task) ?? {};
    const stored = await appendTaskEvents(transaction, taskId, outcome.events ?? [], outcome.alongside);
    const ending = isTerminal(task.status) ? undefined : await endingOf(transaction, taskId, stored);
    return { result: outcome.result, stored, ending };
  });
  const done = deps.events.appending(taskId);
  try {
    const { result, stored, ending } = await persist(deps, waiter, 'change task state', attempt);
    if (stored.length > 0) deps.events.wake(taskId, stored);
    if (ending) tasksFinished.inc(ending);
    return result;
  } finally {
    done();
  }
}

/**
 * Takes the task row `for no key update` in the change's transaction, first: a lock that takes other rows too takes
 * them in the same statement, after the task's (Postgres locks the rows of one statement in the order its `of` list
 * names their tables).
 */
export type TaskLock = (transaction: Db, taskId: string) => Promise<TaskRow | undefined>;

const lockTaskRow: TaskLock = (transaction, taskId) =>
  transaction.selectFrom('tasks').selectAll().where('id', '=', taskId).forNoKeyUpdate().executeTakeFirst();

/**
 * The final status and mode of a task this change ended, counted once committed. Every ending closes the
 * stream, so only a change that stored STREAM_END asks: the ending update of the transaction told it
 * (lifecycle.ts endingIn), or else the row is read again; once per task, by whichever process (or request)
 * ended it. An ended task waits for nothing (waits.ts): its waits go in the same statement.
 */
async function endingOf(transaction: Db, taskId: string, stored: TaskEvent[]): Promise<{ status: string; mode: string } | undefined> {
  if (!stored.some((event) => event.type === 'STREAM_END')) return undefined;
  const row = endingIn(transaction) ?? await transaction
    .with('cleared', (db) => db.deleteFrom('task_waits')
      .where('task_id', 'in', (ended) => ended.selectFrom('tasks').select('id').where('id', '=', taskId).where('status', 'in', TERMINAL_STATUSES)))
    .selectFrom('tasks').select(['status', 'mode']).where('id', '=', taskId).executeTakeFirstOrThrow();
  return isTerminal(row.status) ? { status: row.status, mode: row.mode ?? UNROUTED_MODE } : undefined;
}

/**
 * Appends events that change nothing else (progress, thresholds, pauses reached), then wakes followers. A
 * workflow's go out with other tasks' appends (group commit, which waits out an unreachable database); a
 * request's alone, so that an outage fails it at once.
 */
export async function appendEvents(deps: TaskStateDeps, taskId: string, waiter: Waiter, events: NewTaskEvent[]): Promise<void> {
  if (waiter === 'workflow') {
    await deps.appends.append(taskId, events);
    return;
  }
  const done = deps.events.appending(taskId);
  try {
    const stored = await persist(deps, waiter, 'record task events', () => appendTaskEvents(deps.db, taskId, events));
    if (stored.length > 0) deps.events.wake(taskId, stored);
  } finally {
    done();
  }
}

function persist<T>(deps: TaskStateDeps, waiter: Waiter, what: string, attempt: () => Promise<T>): Promise<T> {
  return waiter === 'workflow' ? retryUntilDatabaseAnswers(attempt, { logger: deps.logger, what }) : retryConflicts(attempt);
}
