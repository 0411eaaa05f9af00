import { sql, type QueryCreator, type Updateable } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Database, TaskRow, TaskStatus } from '../db/schema.ts';
import { storableJsonText, storableText } from '../db/storable-text.ts';
import type { AlongsideWrite } from '../events/append-event.ts';

/** Marks the task RUNNING in `mode` (PAUSED when a pause came while it was queued); returns the row as stored. */
export async function markStarted(transaction: Db, row: TaskRow, mode: string, metadata?: Record<string, unknown>): Promise<TaskRow> {
  return startUpdate(transaction, row, mode, metadata).returningAll().executeTakeFirstOrThrow();
}

/**
 * markStarted with its update handed to `writeLater` (changeTask's `alongside`: written with the events, one round
 * trip fewer); returns the row with the status and mode it will have (started_at, updated_at and metadata as they were).
 */
export function markStartedLater(transaction: Db, row: TaskRow, mode: string, metadata: Record<string, unknown> | undefined, writeLater: (write: AlongsideWrite) => void): TaskRow {
  writeLater(startUpdate(transaction, row, mode, metadata));
  return { ...row, status: startedStatus(row), mode };
}

const startedStatus = (row: TaskRow): TaskStatus => (row.pause_requested ? 'PAUSED' : 'RUNNING');

function startUpdate(transaction: Db, row: TaskRow, mode: string, metadata: Record<string, unknown> | undefined) {
  return transaction.updateTable('tasks')
    .set({
      status: startedStatus(row),
      mode,
      ...(metadata === undefined ? {} : { metadata: sql`metadata || ${JSON.stringify(metadata)}::jsonb` as never }),
      started_at: sql`coalesce(started_at, now())` as never, updated_at: sql`now()` as never,
    })
    .where('id', '=', row.id);
}

/** What a completed task records: its answer (already storable text), the mode that ran, the model and the team's size. */
export interface CompletedTask {
  result: string;
  mode: string;
  modelUsed: string;
  provider: string;
  agentsUsed: number;
  complexityScore: number | null;
  /** Merged into the task's metadata. */
  metadata?: Record<string, unknown>;
  /** The session to title when it has none (workflows/memory/session-titles.ts), in the same statement. */
  sessionTitle?: SessionTitleRequest;
}

/** A session with no title gets `title` (an OpenAI-layer conversation, named by its query), or is marked for the titler with the task. */
export interface SessionTitleRequest { sessionId: string; title?: string; fromTaskId: string }

export async function markCompleted(transaction: Db, taskId: string, completed: CompletedTask): Promise<void> {
  await endTask(transaction, taskId, {
    status: 'COMPLETED',
    result: completed.result,
    error: null,
    mode: completed.mode,
    model_used: completed.modelUsed,
    provider: completed.provider,
    agents_used: completed.agentsUsed,
    complexity_score: completed.complexityScore,
    ...(completed.metadata === undefined ? {} : { metadata: sql`metadata || ${JSON.stringify(completed.metadata)}::jsonb` as never }),
    completed_at: sql`now()` as never,
    updated_at: sql`now()` as never,
  }, completed.sessionTitle);
}

/** What a task produced before it failed or ran out of time, stored beside the error. */
export interface PartialResult {
  /** The best answer it had (a research task's report so far), or '' for none. */
  result: string;
  /** Merged into the task's metadata, as a completed task's is. */
  metadata: Record<string, unknown>;
}

/** Ends the task without a full answer: FAILED or TIMEOUT with the error (and what it produced so far), or CANCELLED. */
export async function markEnded(transaction: Db, taskId: string, status: 'FAILED' | 'TIMEOUT' | 'CANCELLED', error: string, partial?: PartialResult): Promise<void> {
  await endTask(transaction, taskId, {
    status, error,
    ...(partial === undefined ? {} : {
      ...(partial.result === '' ? {} : { result: storableText(partial.result) }),
      metadata: sql`metadata || ${storableJsonText(partial.metadata)}::jsonb` as never,
    }),
    completed_at: sql`now()` as never, updated_at: sql`now()` as never,
  });
}

/**
 * The update of a task that ends, which in the same statement (one round trip inside the row's lock) also frees
 * what it set aside and closes its waits: a call it reserved for and never made (a turn cancelled before its call,
 * a step that failed between) would otherwise count against its session's budget for good, and an ended task
 * waits for nothing (waits.ts).
 */
function updateEndingTask(transaction: Db, taskId: string, sessionTitle?: SessionTitleRequest) {
  // The title's CTE only adds a name the rest does not use: typed as the statement without it.
  const titled: Pick<Db, 'with'> = sessionTitle ? transaction.with('titled', (db) => untitledSession(db, sessionTitle)) as unknown as Db : transaction;
  return titled
    .with('released', (db) => db.deleteFrom('token_reservations').where('task_id', '=', taskId))
    .with('closed_waits', (db) => db.deleteFrom('task_waits').where('task_id', '=', taskId))
    .updateTable('tasks');
}

/** How a task ended in a transaction, as its ending update returned it (see endingIn). */
export interface Ending { status: TaskStatus; mode: string | null }

const endings = new WeakMap<Db, Ending>();

/**
 * The status and mode an ending update of this transaction stored, if one ran: changeTask counts the ending from
 * it instead of reading the row again.
 */
export const endingIn = (transaction: Db): Ending | undefined => endings.get(transaction);

async function endTask(transaction: Db, taskId: string, values: Updateable<Database['tasks']>, sessionTitle?: SessionTitleRequest): Promise<void> {
  const ended = await updateEndingTask(transaction, taskId, sessionTitle).set(values).where('id', '=', taskId).returning(['status', 'mode']).executeTakeFirst();
  if (ended) endings.set(transaction, ended);
}

/** Titles the session if it has none (no title, and none asked for): a CTE of a completing task's update. */
export function untitledSession(db: QueryCreator<Database>, request: SessionTitleRequest) {
  return db.updateTable('sessions')
    .set(request.title === undefined ? { title_from_task: request.fromTaskId } : { title: request.title })
    .where('id', '=', request.sessionId).where('title', 'is', null).where('title_from_task', 'is', null);
}
