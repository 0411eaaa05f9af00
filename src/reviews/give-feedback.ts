import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { ReviewTurn } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { AppError, badRequest, conflict } from '../errors.ts';
import { recordUsage } from '../llm/record-usage.ts';
import { streamModelText, type ModelTextResult } from '../llm/stream-model-text.ts';
import { changeTask } from '../task-state/change-task.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { isFinalRound, MAX_REVIEW_ROUNDS, parsePlanReply, PLANNER_AGENT_ID, type PlanReply } from '../workflows/modes/research/plan-review/plan-conversation.ts';
import { PLAN_MAX_OUTPUT_TOKENS, plannerRequest } from '../workflows/modes/research/plan-review/review-plan.ts';
import { parseTaskSettings } from '../workflows/runtime/task-settings.ts';
import { lockOwnedReview, type LockedReview } from './queries.ts';
import { MAX_FEEDBACK_BYTES } from './schemas.ts';

/** A feedback round's hold on its review: lapses if the process holding it dies mid-call (reference §3.1: 90 s). */
const FEEDBACK_LOCK_SECONDS = 90;
/** The planner's reply is waited for this long, whatever the client does meanwhile (reference §3.1: 60 s, detached). */
const PLANNER_TIMEOUT_MS = 60_000;

interface Started { review: LockedReview; context: Record<string, unknown>; options: Record<string, unknown> }

/**
 * POST /tasks/{id}/review `{action: "feedback"}` (spec 4.3): one round of the plan's conversation. The round takes
 * the review's feedback lock (one round at a time per task, across processes), asks the planner with the whole
 * conversation, then records both turns, the new version and the round's usage, with REVIEW_USER_FEEDBACK and
 * RESEARCH_PLAN_UPDATED, in one commit. A planner that fails is a 502 and records nothing.
 */
export async function giveFeedback(deps: Deps, caller: Caller, taskId: string, message: string | undefined, expected: number | undefined) {
  const feedback = checkedFeedback(message);
  const lock = randomUUID();
  const started = await takeFeedbackLock(deps, caller, taskId, lock, expected);
  const round = started.review.round + 1;
  const turns: ReviewTurn[] = [...started.review.rounds, { role: 'user', message: feedback, timestamp: new Date().toISOString() }];
  let answer: ModelTextResult;
  try {
    const settings = parseTaskSettings(started.context, started.options);
    answer = await streamModelText(deps.models, {
      ...plannerRequest(deps, { query: started.review.query, context: started.context, settings }, turns, round),
      maxOutputTokens: PLAN_MAX_OUTPUT_TOKENS, abortSignal: AbortSignal.timeout(PLANNER_TIMEOUT_MS),
    });
  } catch (error) {
    deps.logger.warn({ err: error, taskId }, 'the research planner failed during a review round');
    await releaseFeedbackLock(deps, taskId, lock);
    throw new AppError(502, 'Failed to generate updated plan');
  }
  const reply = parsePlanReply(answer.text, isFinalRound(round));
  const version = await recordRound(deps, caller, taskId, lock, { turns, reply, answer, round });
  return { version, body: { status: 'reviewing' as const, plan: { message: reply.message, round, version, intent: reply.intent } } };
}

function checkedFeedback(message: string | undefined): string {
  if (message === undefined || message.trim() === '') throw badRequest('message is required: the feedback for the planner');
  if (Buffer.byteLength(message, 'utf8') > MAX_FEEDBACK_BYTES) throw badRequest(`message is too long: at most ${MAX_FEEDBACK_BYTES} bytes`);
  return message;
}

/** Checks the round may happen and takes the review's feedback lock, in one commit under the task's row lock. */
async function takeFeedbackLock(deps: Deps, caller: Caller, taskId: string, lock: string, expected: number | undefined): Promise<Started> {
  const started = await changeTask<Started>(deps, taskId, 'request', async (transaction, task) => {
    const review = await lockOwnedReview(transaction, caller, task);
    if (review.status !== 'reviewing') throw conflict(`The review is over: the plan was ${review.status === 'approved' ? 'approved' : 'not approved in time'}`);
    if (isTerminal(task.status)) throw conflict(`The review is over: the task is ${task.status.toLowerCase()}`);
    if (expected !== undefined && expected !== review.version) throw conflict('Conflict: state has been modified');
    if (review.feedback_in_progress) throw conflict('Another feedback request is in progress. Please wait.');
    if (review.round >= MAX_REVIEW_ROUNDS) throw conflict('Maximum review rounds reached. Please approve the plan.');
    await transaction.updateTable('research_reviews')
      .set({ feedback_lock: lock, feedback_lock_until: sql<Date>`now() + make_interval(secs => ${FEEDBACK_LOCK_SECONDS})` })
      .where('task_id', '=', taskId).execute();
    return { result: { review, context: task.context as Record<string, unknown>, options: task.options as Record<string, unknown> } };
  });
  return started!;
}

async function releaseFeedbackLock(deps: Deps, taskId: string, lock: string): Promise<void> {
  await deps.db.updateTable('research_reviews').set({ feedback_lock: null, feedback_lock_until: null })
    .where('task_id', '=', taskId).where('feedback_lock', '=', lock).execute();
}

interface Round { turns: ReviewTurn[]; reply: PlanReply; answer: ModelTextResult; round: number }

/** Records the round if this request still holds the lock (it lapsed and another round ran meanwhile: 409). Returns the new version. */
async function recordRound(deps: Deps, caller: Caller, taskId: string, lock: string, { turns, reply, answer, round }: Round): Promise<number> {
  const version = await changeTask<number>(deps, taskId, 'request', async (transaction, task) => {
    const review = await lockOwnedReview(transaction, caller, task);
    if (review.feedback_lock !== lock) throw conflict('Conflict: state has been modified');
    const version = review.version + 1;
    const assistant: ReviewTurn = { role: 'assistant', message: reply.message, timestamp: new Date().toISOString() };
    await transaction.updateTable('research_reviews').set({
      rounds: JSON.stringify([...turns, assistant]), round, version,
      current_plan: reply.intent === 'feedback' ? review.current_plan : reply.message,
      research_brief: reply.brief ?? review.research_brief,
      feedback_lock: null, feedback_lock_until: null, updated_at: sql<Date>`now()`,
    }).where('task_id', '=', taskId).execute();
    await recordUsage(transaction, `${taskId}:review:round-${round}`, { taskId, tenantId: task.tenant_id, userId: task.user_id, sessionId: task.session_id }, PLANNER_AGENT_ID, answer);
    return {
      result: version,
      events: [
        { type: 'REVIEW_USER_FEEDBACK', agentId: 'user', message: turns.at(-1)!.message, payload: { round, version } },
        { type: 'RESEARCH_PLAN_UPDATED', agentId: PLANNER_AGENT_ID, message: reply.message, payload: { round, version, intent: reply.intent } },
      ],
    };
  });
  return version!;
}
