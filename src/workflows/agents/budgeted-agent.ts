import type { Deps } from '../../deps.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { markPauseRequested } from '../../task-state/control-flags.ts';
import type { AgentCall } from './call-agent.ts';
import { callAgent } from './run-agent.ts';
import { checkpoint } from '../runtime/checkpoint.ts';
import { BudgetExhaustedError } from '../runtime/control-errors.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { describeExhausted } from './token-budget.ts';
import { runTaskStep } from '../runtime/task-step.ts';

/**
 * Runs an agent call under the token budgets. When a budget is spent the task pauses with reason
 * `budget` (resume it after raising the budget) or, with BUDGET_EXHAUSTED_ACTION=fail, fails. A scheduled
 * run always fails: nobody is there to raise the budget, and its schedule pauses instead (task-workflow.ts).
 */
export async function runBudgetedAgent(deps: Deps, task: TaskSnapshot, prepare: () => Promise<AgentCall>, stepName: string): Promise<AgentAnswer> {
  for (;;) {
    const outcome = await callAgent(deps, task, prepare, stepName);
    if ('answer' in outcome) return outcome.answer;
    const message = describeExhausted(outcome.budgetExhausted);
    if (deps.config.budgets.onExhausted === 'fail' || task.scheduleId !== undefined) throw new BudgetExhaustedError(message);
    await runTaskStep(deps, 'pause-for-budget', () => pauseForBudget(deps, task.id, message));
    await checkpoint(deps, task, 'budget');
  }
}

async function pauseForBudget(deps: Deps, taskId: string, message: string): Promise<void> {
  await changeTask(deps, taskId, 'workflow', async (transaction, task) => {
    if (task.cancel_requested || task.pause_requested) return undefined;
    await markPauseRequested(transaction, taskId, { by: 'system', reason: 'budget' });
    return { events: [{ type: 'WORKFLOW_PAUSING', agentId: 'budget', message, payload: { reason: 'budget' } }] };
  });
}
