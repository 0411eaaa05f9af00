import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';
import { inAgentSpan } from './agent-span.ts';
import { runSingleCall, type AgentCall, type AgentOutcome } from './call-agent.ts';
import { runToolLoop } from './tool-loop.ts';
import { failIfBudgetIsFinal, meetSpentBudget } from '../runtime/budget-policy.ts';
import { withCancelWatch } from '../runtime/cancel-watch.ts';

/**
 * One agent inside the caller's durable step: a single model call, or the tool loop for an agent with tools
 * (whose first turn costs the same two commits when the model calls no tool). A spent cost budget ends the
 * run (runtime/budget-policy.ts); a spent token budget is met by the call's rule (`onSpentBudget`): reported to
 * the caller, or waited out in the step, after which the agent runs again (its finished tool calls replay).
 */
export function runAgent(deps: Deps, task: TaskSnapshot, call: AgentCall, stepKey: string, cancel: AbortSignal): Promise<AgentOutcome> {
  return inAgentSpan(task, call, async () => {
    for (;;) {
      const outcome = await (call.tools ? runToolLoop(deps, task, call, call.tools, stepKey, cancel) : runSingleCall(deps, task, call, stepKey, cancel));
      if ('answer' in outcome) return outcome;
      if (outcome.budgetExhausted.scope === 'run') failIfBudgetIsFinal(deps, task, outcome.budgetExhausted);
      if (await meetSpentBudget(deps, task, outcome.budgetExhausted, call.onSpentBudget ?? 'report') === 'report') return outcome;
    }
  });
}

/**
 * One agent as a durable step of its own (`prepare` builds the prompt inside it, so reads are not repeated on
 * replay). A cancel request aborts it mid-stream.
 */
export async function callAgent(deps: Deps, task: TaskSnapshot, prepare: () => Promise<AgentCall>, stepName: string): Promise<AgentOutcome> {
  return runTaskStep(deps, stepName, () => withCancelWatch(deps, task.id, async (cancel) => {
    const call = await prepare();
    return runAgent(deps, task, call, `${stepName}#${currentStepId()}`, cancel);
  }));
}
