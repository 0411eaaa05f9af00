import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { markReviewEnded } from '../task-state/control-flags.ts';
import { deliverSignal, PLAN_REVIEW_SIGNAL } from '../task-state/waits.ts';

const BATCH = 500;

/**
 * Periodic: a plan nobody approved by its review's deadline times out, and its task is woken to fail with
 * `research plan review timed out` (reference §3.1); reviews past their retention are deleted (they already read 404).
 */
export async function expireReviews(deps: Deps): Promise<void> {
  const lapsed = await deps.db.selectFrom('research_reviews').select('task_id')
    .where('status', '=', 'reviewing').where('review_deadline', '<=', sql<Date>`now()`).limit(BATCH).execute();
  for (const { task_id: taskId } of lapsed) {
    await deliverSignal(deps, taskId, PLAN_REVIEW_SIGNAL, async (transaction, task) => {
      const timedOut = await transaction.updateTable('research_reviews').set({ status: 'timed_out', updated_at: sql<Date>`now()` })
        .where('task_id', '=', taskId).where('status', '=', 'reviewing').executeTakeFirst();
      if (timedOut.numUpdatedRows > 0n) await markReviewEnded(transaction, task);
      return undefined;
    });
  }
  await deps.db.deleteFrom('research_reviews').where('retained_until', '<=', sql<Date>`now()`).execute();
}
