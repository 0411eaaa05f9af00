import type { Deps } from '../../deps.ts';
import type { AgentCall } from './call-agent.ts';
import { callAgent } from './run-agent.ts';
import { checkpoint } from '../runtime/checkpoint.ts';
import { failIfBudgetIsFinal, pauseForBudget } from '../runtime/budget-policy.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { describeExhausted } from './token-budget.ts';
import { runTaskStep } from '../runtime/task-step.ts';

/**
 * Runs an agent call as a step of its own under the budget policy (runtime/budget-policy.ts): refused for a
 * spent budget, the task pauses for budget between steps, at the `budget` checkpoint, or fails.
 */
export async function runBudgetedAgent(deps: Deps, task: TaskSnapshot, prepare: () => Promise<AgentCall>, stepName: string): Promise<AgentAnswer> {
  for (;;) {
    const outcome = await callAgent(deps, task, prepare, stepName);
    if ('answer' in outcome) return outcome.answer;
    failIfBudgetIsFinal(deps, task, outcome.budgetExhausted);
    await runTaskStep(deps, 'pause-for-budget', () => pauseForBudget(deps, task.id, describeExhausted(outcome.budgetExhausted)));
    await checkpoint(deps, task, 'budget');
  }
}
