import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';

/** Marks the task RUNNING in `mode` (PAUSED when a pause came while it was queued); returns the row as stored. */
export async function markStarted(transaction: Db, row: TaskRow, mode: string): Promise<TaskRow> {
  return transaction.updateTable('tasks')
    .set({
      status: row.pause_requested ? 'PAUSED' : 'RUNNING',
      mode,
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
  await transaction.updateTable('tasks').set({
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

/** Ends the task without an answer: FAILED or TIMEOUT with the error, or CANCELLED. */
export async function markEnded(transaction: Db, taskId: string, status: 'FAILED' | 'TIMEOUT' | 'CANCELLED', error: string): Promise<void> {
  await transaction.updateTable('tasks').set({ status, error, completed_at: sql`now()` as never, updated_at: sql`now()` as never })
    .where('id', '=', taskId).execute();
}
