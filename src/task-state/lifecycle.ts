import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import { storableJsonText, storableText } from '../db/storable-text.ts';

/** Marks the task RUNNING in `mode` (PAUSED when a pause came while it was queued); returns the row as stored. */
export async function markStarted(transaction: Db, row: TaskRow, mode: string, metadata?: Record<string, unknown>): Promise<TaskRow> {
  return transaction.updateTable('tasks')
    .set({
      status: row.pause_requested ? 'PAUSED' : 'RUNNING',
      mode,
      ...(metadata === undefined ? {} : { metadata: sql`metadata || ${JSON.stringify(metadata)}::jsonb` as never }),
      started_at: sql`coalesce(started_at, now())` as never, updated_at: sql`now()` as never,
    })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
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
}

export async function markCompleted(transaction: Db, taskId: string, completed: CompletedTask): Promise<void> {
  await updateEndingTask(transaction, taskId).set({
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
  }).where('id', '=', taskId).execute();
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
  await updateEndingTask(transaction, taskId).set({
    status, error,
    ...(partial === undefined ? {} : {
      ...(partial.result === '' ? {} : { result: storableText(partial.result) }),
      metadata: sql`metadata || ${storableJsonText(partial.metadata)}::jsonb` as never,
    }),
    completed_at: sql`now()` as never, updated_at: sql`now()` as never,
  }).where('id', '=', taskId).execute();
}

/**
 * The update of a task that ends, which also frees what it set aside, in the same statement (one round trip inside
 * the row's lock): a call it reserved for and never made (a turn cancelled before its call, a step that failed
 * between) would otherwise count against its session's budget for good.
 */
function updateEndingTask(transaction: Db, taskId: string) {
  return transaction.with('released', (db) => db.deleteFrom('token_reservations').where('task_id', '=', taskId)).updateTable('tasks');
}
