import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import { ensureOwnedTask } from '../auth/ownership.ts';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import { notFound } from '../errors.ts';

export const REVIEW_NOT_FOUND = 'Review session not found or expired';

/** The task's review as its owner may see it: another tenant's task is 404, another user's 403, a review past retention 404. */
export async function findOwnedReview(db: Db, caller: Caller, taskId: string) {
  const task = await db.selectFrom('tasks').select(['id', 'tenant_id', 'user_id']).where('id', '=', taskId).executeTakeFirst();
  ensureOwnedTask(caller, task);
  const review = await db.selectFrom('research_reviews').selectAll().where('task_id', '=', taskId)
    .where('retained_until', '>', sql<Date>`now()`).executeTakeFirst();
  if (!review) throw notFound(REVIEW_NOT_FOUND);
  return review;
}

/** The review row, locked for a change, read inside a transaction that already holds its task's row (change-task.ts). */
export async function lockOwnedReview(transaction: Db, caller: Caller, task: TaskRow) {
  ensureOwnedTask(caller, task);
  const review = await transaction.selectFrom('research_reviews')
    .select(['task_id', 'query', 'status', 'round', 'version', 'current_plan', 'research_brief', 'rounds', 'feedback_lock'])
    .select(sql<boolean>`feedback_lock is not null and feedback_lock_until > now()`.as('feedback_in_progress'))
    .where('task_id', '=', task.id).where('retained_until', '>', sql<Date>`now()`)
    .forUpdate().executeTakeFirst();
  if (!review) throw notFound(REVIEW_NOT_FOUND);
  return review;
}

export type LockedReview = Awaited<ReturnType<typeof lockOwnedReview>>;
