import { retryUntilDatabaseAnswers } from '../../db/retry.ts';
import type { Deps } from '../../deps.ts';
import { runDurableStep } from '../../engine/engine.ts';

/**
 * A durable step of a task's workflow. When the database cannot be reached mid-step (a restart, a failover,
 * a frozen server), the step runs again once it answers, as it would after a crash (which every step is
 * written to survive), instead of failing the task; the engine waits for its own records the same way.
 */
export function runTaskStep<T>(deps: Deps, name: string, work: () => Promise<T>): Promise<T> {
  return runDurableStep(name, () => retryUntilDatabaseAnswers(work, { logger: deps.logger, what: `run step ${name}` }));
}
