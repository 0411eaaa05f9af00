import type { Deps } from '../deps.ts';
import { modeEntryFor } from './mode-table.ts';
import type { TaskOutcome } from './runtime/task-lifecycle.ts';
import type { TaskSnapshot } from './runtime/task-snapshot.ts';

/** The mode a task starts in: the one it asked for, else the deployment's default (`auto` until routed). */
export function startingMode(deps: Deps, requestedMode: string | null): string {
  return requestedMode ?? deps.config.defaultTaskMode;
}

/** Runs the task's workflow: the mode table's entry for its settings and mode (mode-table.ts). */
export async function routeTask(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const mode = task.mode ?? startingMode(deps, task.requestedMode);
  const entry = modeEntryFor(task.settings, mode);
  // Submission refuses what no mode runs; a task whose mode went away since (a restart on other code) fails.
  if (!entry?.run) throw new Error(`mode ${mode} is not available in this deployment`);
  return entry.run(deps, task);
}
