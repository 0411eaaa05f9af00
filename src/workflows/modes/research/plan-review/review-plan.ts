import type { Deps } from '../../../../deps.ts';
import { currentStepId } from '../../../../engine/engine.ts';
import { appendEvents } from '../../../../task-state/change-task.ts';
import { PLAN_REVIEW_SIGNAL } from '../../../../task-state/waits.ts';
import type { ReviewTurn } from '../../../../db/schema.ts';
import { callModelWithinBudget, type ModelRequest } from '../../../agent-calls/budgeted-call.ts';
import { withCancelWatch } from '../../../runtime/cancel-watch.ts';
import { waitForSignal } from '../../../runtime/durable-wait.ts';
import type { TaskSnapshot } from '../../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../../runtime/task-step.ts';
import { ResearchPhaseError } from '../research-phase-error.ts';
import { isFinalRound, parsePlanReply, planConversation, PLANNER_AGENT_ID, type PlanReply } from './plan-conversation.ts';
import { openReview, readReviewOutcome, type ReviewOutcome } from './review-records.ts';

export const REVIEW_PHASE = 'plan_review';

/** The plan the research follows once its owner approved it, with the brief and the conversation that led to it. */
export type ConfirmedPlan = Pick<ReviewOutcome, 'plan' | 'brief' | 'conversation'>;

/**
 * The human review of a research plan (spec 3.2, reference §3.1): draft a plan, open the review (the task reads
 * PAUSED, RESEARCH_PLAN_READY), and wait for its owner's approval, parked and holding no worker; feedback rounds
 * happen meanwhile in the gateway (src/reviews/). Approved: RESEARCH_PLAN_APPROVED and the confirmed plan. A review
 * left unanswered past its timeout fails the task. The wait does not count against the task's deadline.
 */
export async function reviewResearchPlan(deps: Deps, task: TaskSnapshot, timeoutSeconds: number): Promise<ConfirmedPlan> {
  const draft = await runTaskStep(deps, 'review:draft', () => draftPlan(deps, task));
  const openedAtMs = await runTaskStep(deps, 'review:open', () => openReview(deps, task, draft, timeoutSeconds));
  const outcome = await waitForSignal(deps, task, {
    signal: PLAN_REVIEW_SIGNAL, place: REVIEW_PHASE, steps: { read: 'review:read', park: 'review:park' },
    read: () => readReviewOutcome(deps, task.id),
    arrived: (state) => state.status !== 'reviewing',
    cancelled: (state) => state.cancelRequested,
  });
  if (outcome.status === 'timed_out') throw new ResearchPhaseError(REVIEW_PHASE, 'research plan review timed out');
  const approvedAtMs = await runTaskStep(deps, 'review:approved', () => announceApproval(deps, task, outcome));
  task.deadlineMs += approvedAtMs - openedAtMs;
  return { plan: outcome.plan, brief: outcome.brief, conversation: outcome.conversation };
}

/** The first plan, from the question alone: one budgeted call (a spent budget pauses the task here). */
async function draftPlan(deps: Deps, task: TaskSnapshot): Promise<PlanReply> {
  const outcome = await withCancelWatch(deps, task.id, (cancel) => callModelWithinBudget(deps, task, {
    agentId: PLANNER_AGENT_ID,
    callKey: `${task.id}:review:draft#${currentStepId()}`,
    request: plannerRequest(deps, task, [], 1),
    maxOutputTokens: PLAN_MAX_OUTPUT_TOKENS,
    onSpentBudget: { waitAt: REVIEW_PHASE },
  }, cancel));
  if (!('result' in outcome)) throw new Error('the plan review waits out a spent budget');
  return parsePlanReply(outcome.result.text, false);
}

/** What the planner is asked for the reply that makes round `round`: the question, the turns so far, the task's models. */
export function plannerRequest(deps: Deps, task: Pick<TaskSnapshot, 'query' | 'context' | 'settings'>, turns: readonly ReviewTurn[], round: number): ModelRequest {
  return {
    selection: task.settings.models,
    ...planConversation(task.query, turns, isFinalRound(round)),
    mockDelayMs: task.settings.mock.delayMs ?? deps.config.mockDelayMs,
    mockOptions: planMockOptions(task.context, round),
  };
}

export const PLAN_MAX_OUTPUT_TOKENS = 2048;

/**
 * What the mock provider is told when it drafts round `round` of a plan: `context.mock_review` scripts the
 * planner's intent per round (`intents`) and the rounds whose call fails (`fail_rounds`).
 */
function planMockOptions(context: Record<string, unknown>, round: number): Record<string, unknown> {
  const script = (typeof context.mock_review === 'object' && context.mock_review !== null ? context.mock_review : {}) as { intents?: unknown; fail_rounds?: unknown };
  const intent = Array.isArray(script.intents) ? script.intents[round - 1] : undefined;
  const fails = Array.isArray(script.fail_rounds) && script.fail_rounds.includes(round);
  return { purpose: 'research-plan', ...(typeof intent === 'string' ? { intent } : {}), ...(fails ? { fail: true } : {}) };
}

async function announceApproval(deps: Deps, task: TaskSnapshot, outcome: ReviewOutcome): Promise<number> {
  await appendEvents(deps, task.id, 'workflow', [{
    type: 'RESEARCH_PLAN_APPROVED', agentId: PLANNER_AGENT_ID, message: 'Research plan approved; the research starts',
    payload: { plan: outcome.plan, rounds: outcome.conversation.length }, dedupeKey: 'review:plan-approved',
  }]);
  return Date.now();
}
