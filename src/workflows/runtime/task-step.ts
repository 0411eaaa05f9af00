import { retryUntilDatabaseAnswers } from '../../db/retry.ts';
import type { Deps } from '../../deps.ts';
import { currentStepId, currentWorkflowId, runDurableStep } from '../../engine/engine.ts';
import { inSpan } from '../../observability/spans.ts';

/**
 * A durable step of a task's workflow. When the database cannot be reached mid-step (a restart, a failover,
 * a frozen server), the step runs again once it answers, as it would after a crash (which every step is
 * written to survive), instead of failing the task; the engine waits for its own records the same way.
 * Its span is opened inside the step, so a replay that returns the step's record makes none: a trace shows
 * the work that ran. An outcome `isOwnRecord` accepts is left unrecorded (engine.ts runDurableStep).
 */
export function runTaskStep<T>(deps: Deps, name: string, work: () => Promise<T>, isOwnRecord?: (outcome: T) => boolean): Promise<T> {
  const options = { logger: deps.logger, what: `run step ${name}` };
  const run = async () => {
    try {
      return await retryUntilDatabaseAnswers(work, options);
    } catch (error) {
      // Recorded, an error of the hand-over would be replayed as the task's own failure by the worker taking it over.
      if (deps.handingOver.aborted) return haltForShutdown();
      throw error;
    }
  };
  return runDurableStep(name, () => inSpan(`step ${name}`, { attributes: stepAttributes(name) }, run), (attempt) => retryUntilDatabaseAnswers(attempt, options), isOwnRecord);
}

/**
 * An error once the process hands its workflows over at shutdown comes from the shutdown itself (the model call
 * aborted, the engine and pools closing under the step), not from the task: the execution records nothing, neither
 * the step's outcome nor the task's, and never settles; the worker that takes the workflow over runs it on.
 */
export function haltForShutdown(): Promise<never> {
  return new Promise(() => {});
}

const stepAttributes = (name: string) => ({
  'agentgate.task.id': currentWorkflowId(),
  'agentgate.step.name': name,
  'agentgate.step.id': currentStepId(),
});
