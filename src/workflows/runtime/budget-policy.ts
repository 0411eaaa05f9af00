import type { Deps } from '../../deps.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { markPauseRequested, markWaitingInStep } from '../../task-state/control-flags.ts';
import { PAUSE_SIGNAL } from '../../task-state/waits.ts';
import { describeExhausted, type BudgetState } from '../agent-calls/token-budget.ts';
import { BudgetExhaustedError } from './control-errors.ts';
import { announcePaused, readControl } from './checkpoint.ts';
import { waitForSignal } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

/**
 * The one policy for a spent budget, the same in every mode (docs/decisions.md, issue 27): a budget is the
 * task's, so a model call refused for one stops the task, never just the part that asked. A spent token budget
 * (task or session) pauses the task with reason `budget`, where the call was; raise the budget and resume, and
 * that call runs again. It fails the task instead (BudgetExhaustedError) when nobody can raise it or the
 * deployment says so: a run's cost budget (a hard limit), any budget of a scheduled run, BUDGET_EXHAUSTED_ACTION=fail.
 */
export function failIfBudgetIsFinal(deps: Deps, task: TaskSnapshot, exhausted: BudgetState): void {
  if (exhausted.scope === 'run' || deps.config.budgets.onExhausted === 'fail' || task.scheduleId !== undefined) {
    throw new BudgetExhaustedError(describeExhausted(exhausted));
  }
}

/**
 * Pauses the task for budget (unless a pause or cancel came first): WORKFLOW_PAUSING by `budget`. `inStep`: a step
 * waits out the pause, whose time the resume then takes off the deadline (a checkpoint's pause counts its own).
 */
export async function pauseForBudget(deps: Deps, taskId: string, message: string, options: { inStep?: boolean } = {}): Promise<void> {
  await changeTask(deps, taskId, 'workflow', async (transaction, task) => {
    if (task.cancel_requested) return undefined;
    if (options.inStep) await markWaitingInStep(transaction, taskId);
    if (task.pause_requested) return undefined;
    await markPauseRequested(transaction, taskId, { by: 'system', reason: 'budget' });
    return { events: [{ type: 'WORKFLOW_PAUSING', agentId: 'budget', message, payload: { reason: 'budget' } }] };
  });
}

/**
 * The policy for a part that runs inside a step (an agent of a plan, a template node, the decomposition): the
 * task pauses for budget and the step waits for the resume, parking the task (runtime/durable-wait.ts); the
 * resume re-runs the step. Returns when the resume came before the park took hold: the caller calls again. The
 * time paused is not counted against the deadline (runtime/deadline.ts `allowForWaitsInSteps`).
 */
export async function waitOutSpentBudget(deps: Deps, task: TaskSnapshot, exhausted: BudgetState, place: string): Promise<void> {
  failIfBudgetIsFinal(deps, task, exhausted);
  await pauseForBudget(deps, task.id, describeExhausted(exhausted), { inStep: true });
  await announcePaused(deps, task.id, place);
  await waitForSignal(deps, task, {
    signal: PAUSE_SIGNAL, place, read: () => readControl(deps, task.id),
    arrived: (state) => !state.pauseRequested, cancelled: (state) => state.cancelRequested,
  });
}

/**
 * What a call refused for a spent budget does, by where it runs: `report` hands the refusal back to the caller
 * (an agent called between steps pauses at the `budget` checkpoint after its step; the history summary leaves the
 * summary out); `waitAt` waits inside the step (waitOutSpentBudget, the place named in WORKFLOW_PAUSED) and calls again.
 */
export type SpentBudgetRule = 'report' | { waitAt: string };

/** Applies the rule to a refusal: `again` once the task was resumed, `report` when the caller handles it. */
export async function meetSpentBudget(deps: Deps, task: TaskSnapshot, exhausted: BudgetState, rule: SpentBudgetRule): Promise<'again' | 'report'> {
  if (rule === 'report') return 'report';
  await waitOutSpentBudget(deps, task, exhausted, rule.waitAt);
  return 'again';
}
