import { retryUntilDatabaseAnswers } from '../../db/retry.ts';
import type { Deps } from '../../deps.ts';
import { currentStepId, currentWorkflowId, runDurableStep } from '../../engine/engine.ts';
import { inSpan } from '../../observability/spans.ts';

/**
 * A durable step of a task's workflow. When the database cannot be reached mid-step (a restart, a failover,
 * a frozen server), the step runs again once it answers, as it would after a crash (which every step is
 * written to survive), instead of failing the task; the engine waits for its own records the same way.
 * Its span is opened inside the step, so a replay that returns the step's record makes none: a trace shows
 * the work that ran.
 */
export function runTaskStep<T>(deps: Deps, name: string, work: () => Promise<T>): Promise<T> {
  const options = { logger: deps.logger, what: `run step ${name}` };
  return runDurableStep(name, () => inSpan(`step ${name}`, { attributes: stepAttributes(name) }, () => retryUntilDatabaseAnswers(work, options)),
    (attempt) => retryUntilDatabaseAnswers(attempt, options));
}

const stepAttributes = (name: string) => ({
  'agentgate.task.id': currentWorkflowId(),
  'agentgate.step.name': name,
  'agentgate.step.id': currentStepId(),
});
