import { sql } from 'kysely';
import type { ReviewStatus, ReviewTurn } from '../../../../db/schema.ts';
import type { Deps } from '../../../../deps.ts';
import { changeTask } from '../../../../task-state/change-task.ts';
import { markWaitingForReview } from '../../../../task-state/control-flags.ts';
import type { TaskSnapshot } from '../../../runtime/task-snapshot.ts';
import { PLANNER_AGENT_ID, type PlanReply } from './plan-conversation.ts';

/** The review as the waiting workflow reads it. */
export interface ReviewOutcome {
  status: ReviewStatus;
  plan: string;
  brief: string;
  conversation: ReviewTurn[];
  cancelRequested: boolean;
}

/**
 * Opens the review of the drafted plan in one commit: its record (round 1, version 1), the task PAUSED and waiting
 * for the review's signal, and RESEARCH_PLAN_READY. A re-run after a crash that followed the commit finds the
 * record and changes nothing. Returns when the review opened, as epoch milliseconds.
 */
export async function openReview(deps: Deps, task: TaskSnapshot, draft: PlanReply, timeoutSeconds: number): Promise<number> {
  const opened = await changeTask<number>(deps, task.id, 'workflow', async (transaction) => {
    const earlier = await transaction.selectFrom('research_reviews').select('created_at').where('task_id', '=', task.id).executeTakeFirst();
    if (earlier) return { result: earlier.created_at.getTime() };
    const turn: ReviewTurn = { role: 'assistant', message: draft.message, timestamp: new Date().toISOString() };
    const review = await transaction.insertInto('research_reviews').values({
      task_id: task.id, tenant_id: task.tenantId, user_id: task.userId, query: task.query, status: 'reviewing',
      current_plan: draft.intent === 'feedback' ? '' : draft.message, research_brief: draft.brief ?? '', rounds: JSON.stringify([turn]),
      review_deadline: sql<Date>`now() + make_interval(secs => ${timeoutSeconds})`,
      retained_until: sql<Date>`now() + make_interval(secs => ${timeoutSeconds + deps.config.reviews.retentionSeconds})`,
    }).returning('created_at').executeTakeFirstOrThrow();
    await markWaitingForReview(transaction, task.id);
    return {
      result: review.created_at.getTime(),
      events: [{
        type: 'RESEARCH_PLAN_READY', agentId: PLANNER_AGENT_ID, message: draft.message,
        payload: { round: 1, version: 1, intent: draft.intent }, dedupeKey: 'review:plan-ready',
      }],
    };
  });
  return opened!;
}

export async function readReviewOutcome(deps: Deps, taskId: string): Promise<ReviewOutcome> {
  const row = await deps.db.selectFrom('research_reviews').innerJoin('tasks', 'tasks.id', 'research_reviews.task_id')
    .select(['research_reviews.status', 'research_reviews.current_plan', 'research_reviews.research_brief', 'research_reviews.rounds', 'tasks.cancel_requested'])
    .where('research_reviews.task_id', '=', taskId).executeTakeFirstOrThrow();
  return { status: row.status, plan: row.current_plan, brief: row.research_brief, conversation: row.rounds, cancelRequested: row.cancel_requested };
}
