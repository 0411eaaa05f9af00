import { sql } from 'kysely';
import { recordAudit } from '../auth/audit.ts';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, conflict } from '../errors.ts';
import { markReviewEnded } from '../task-state/control-flags.ts';
import { deliverSignal, PLAN_REVIEW_SIGNAL } from '../task-state/waits.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { lockOwnedReview } from './queries.ts';

/** An approved review stays readable this long (reference §3.1: 60 minutes). */
const APPROVED_RETENTION_SECONDS = 3600;
const APPROVED = { status: 'approved' as const, message: 'Research started' };

/**
 * POST /tasks/{id}/review `{action: "approve"}` (spec 4.3): the plan as it stands is the one the research follows.
 * The approval is the signal the task waits for (task-state/waits.ts): recorded under the task's row lock, the task
 * RUNNING again, and the task woken; the workflow announces RESEARCH_PLAN_APPROVED when it reads it. Approving an
 * approved plan answers the same again.
 */
export async function approvePlan(deps: Deps, caller: Caller, taskId: string, expected: number | undefined) {
  const version = await deliverSignal<number>(deps, taskId, PLAN_REVIEW_SIGNAL, async (transaction, task) => {
    const review = await lockOwnedReview(transaction, caller, task);
    if (review.status === 'approved') return { result: review.version };
    if (review.status === 'timed_out') throw conflict('The review is over: the plan was not approved in time');
    if (isTerminal(task.status)) throw conflict(`The review is over: the task is ${task.status.toLowerCase()}`);
    if (expected !== undefined && expected !== review.version) throw conflict('Conflict: plan has been updated. Please review the latest version.');
    if (review.feedback_in_progress) throw conflict('A feedback request is in progress. Please wait and try again.');
    if (review.current_plan.trim() === '') throw badRequest('No plan to approve yet: the planner is waiting for answers to its questions (send them as feedback)');
    await transaction.updateTable('research_reviews').set({
      status: 'approved', updated_at: sql<Date>`now()`,
      retained_until: sql<Date>`now() + make_interval(secs => ${APPROVED_RETENTION_SECONDS})`,
    }).where('task_id', '=', taskId).execute();
    await markReviewEnded(transaction, task);
    await recordAudit(transaction, {
      type: 'research_plan_approved', userId: caller.userId, tenantId: caller.tenantId,
      details: { task_id: taskId, version: review.version, round: review.round },
    });
    return { result: review.version };
  });
  return { version: version!, body: APPROVED };
}
