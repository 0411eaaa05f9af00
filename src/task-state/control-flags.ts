import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import { openWait, PAUSE_SIGNAL, PLAN_REVIEW_SIGNAL } from './waits.ts';

/** Who paused the task and why: a user with their reason, or the system (`budget`). */
export interface PauseRequest { by: string; reason: string | null }

/**
 * Marks the task paused (it reads PAUSED from now on) and opens its wait for the `pause` signal; the workflow
 * stops at its next checkpoint. Used by the pause route and by an agent whose budget ran out.
 */
export async function markPauseRequested(transaction: Db, taskId: string, pause: PauseRequest): Promise<void> {
  await transaction.updateTable('tasks').set({
    status: 'PAUSED', pause_requested: true, paused_at: sql`now()` as never,
    pause_reason: pause.reason, paused_by: pause.by, updated_at: sql`now()` as never,
  }).where('id', '=', taskId).execute();
  await openWait(transaction, taskId, PAUSE_SIGNAL);
}

/**
 * Notes that a step of the task waits out its pause (a spent budget met inside an agent's step): the time until the
 * resume is then taken off the task's deadline (markResumed), as a checkpoint takes off the time it waited.
 */
export async function markWaitingInStep(transaction: Db, taskId: string): Promise<void> {
  await transaction.updateTable('tasks').set({ in_step_paused_at: sql`coalesce(in_step_paused_at, now())` as never }).where('id', '=', taskId).execute();
}

/**
 * Clears the pause: back to RUNNING, or QUEUED for a task that never started. The caller delivers the signal. The
 * time a step waited for it counts in `in_step_pause_ms` (runtime/deadline.ts `allowForWaitsInSteps`).
 */
export async function markResumed(transaction: Db, task: TaskRow): Promise<void> {
  await transaction.updateTable('tasks').set({
    status: task.started_at ? 'RUNNING' : 'QUEUED', pause_requested: false, paused_at: null,
    pause_reason: null, paused_by: null, updated_at: sql`now()` as never,
    in_step_pause_ms: sql`in_step_pause_ms + coalesce(round(extract(epoch from now() - in_step_paused_at) * 1000), 0)` as never,
    in_step_paused_at: null,
  }).where('id', '=', task.id).execute();
}

/** Why a task reads PAUSED while its research plan waits for its owner (`pause_reason`). */
export const REVIEW_PAUSE_REASON = 'plan_review';

/**
 * Marks the task PAUSED while its research plan is in review (spec 3.1: paused by review) and opens its wait for
 * the review's signal. It is not a pause the owner asked for: resume does not end it, approval does.
 */
export async function markWaitingForReview(transaction: Db, taskId: string): Promise<void> {
  await transaction.updateTable('tasks').set({
    status: 'PAUSED', paused_at: sql`now()` as never, pause_reason: REVIEW_PAUSE_REASON, paused_by: 'system', updated_at: sql`now()` as never,
  }).where('id', '=', taskId).execute();
  await openWait(transaction, taskId, PLAN_REVIEW_SIGNAL);
}

/** The plan was approved: the task runs again. The caller delivers the review's signal. */
export async function markReviewEnded(transaction: Db, task: TaskRow): Promise<void> {
  if (task.status !== 'PAUSED' || !isWaitingForReview(task)) return;
  await transaction.updateTable('tasks').set({
    status: 'RUNNING', paused_at: null, pause_reason: null, paused_by: null, updated_at: sql`now()` as never,
  }).where('id', '=', task.id).execute();
}

/** Whether the task is paused only because its plan waits for review. */
export const isWaitingForReview = (task: TaskRow) => task.pause_reason === REVIEW_PAUSE_REASON && !task.pause_requested;

export interface CancelRequest {
  by: string;
  reason: string | null;
  /** Set when no worker runs the task (queued, or parked): it ends CANCELLED at once, with this error. */
  endedWith?: string;
}

/** Records a cancel: a running workflow honours it at its next checkpoint; a task no worker runs ends now. */
export async function markCancelRequested(transaction: Db, taskId: string, cancel: CancelRequest): Promise<void> {
  await transaction.updateTable('tasks').set({
    cancel_requested: true, cancel_reason: cancel.reason, cancelled_by: cancel.by,
    ...(cancel.endedWith === undefined ? {} : { parked_at_step: null, status: 'CANCELLED', completed_at: sql`now()` as never, error: cancel.endedWith }),
    updated_at: sql`now()` as never,
  }).where('id', '=', taskId).execute();
}
