import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { checkpoint } from './checkpoint.ts';
import { hasErrorName } from './control-errors.ts';
import { titleSession } from './session-title.ts';
import { runSimpleWorkflow } from './simple.ts';
import { completeTask, failTask, finishCancelled, startTask, type TaskOutcome } from './task-lifecycle.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

export type TaskWorkflow = (taskId: string) => Promise<void>;

/** The durable workflow of every task; its workflow id is the task id. Register before DBOS.launch(). */
export function registerTaskWorkflow(deps: Deps): TaskWorkflow {
  return DBOS.registerWorkflow(async (taskId: string) => {
    const task = await runTaskStep(deps, 'start-task', () => startTask(deps, taskId, chooseMode));
    if (!task) return;
    if (await runToEnd(deps, task) === 'completed') await titleSession(deps, task);
  }, { name: 'agentgate.task' });
}

/**
 * Runs the task and records how it ended. A task that parked (paused) has not ended: its workflow
 * returns without recording anything, and resume rewinds it to where it parked.
 */
async function runToEnd(deps: Deps, task: TaskSnapshot): Promise<'completed' | 'ended' | 'parked'> {
  try {
    await checkpoint(deps, task, 'pre_routing');
    const outcome = await routeTask(deps, task);
    await checkpoint(deps, task, 'pre_completion');
    await runTaskStep(deps, 'complete-task', () => completeTask(deps, task, outcome));
    return 'completed';
  } catch (error) {
    if (hasErrorName(error, 'TaskParkedError')) return 'parked';
    if (deps.stopping.aborted) return haltForShutdown();
    await runTaskStep(deps, 'finish-with-error', () => finishWithError(deps, task, error));
    return 'ended';
  }
}

/**
 * An error while the process shuts down comes from the shutdown itself (the engine and pools closing under
 * the step), not from the task: record nothing and never settle, so the next start recovers the workflow.
 */
function haltForShutdown(): Promise<never> {
  return new Promise(() => {});
}

/** The task modes this router can run as what they promise; other layers offer only these. */
export const SUPPORTED_MODES: readonly string[] = ['simple'];

/** The mode a task runs in, recorded when it starts: only the simple workflow exists so far. */
function chooseMode(_requestedMode: string | null): string {
  return 'simple';
}

/** Runs the workflow of the task's mode. Only the simple workflow exists so far; later issues add the others. */
async function routeTask(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  return runSimpleWorkflow(deps, task);
}

/** Errors come back from step records by name: cancellation, the deadline, or a failure. */
async function finishWithError(deps: Deps, task: TaskSnapshot, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  if (hasErrorName(error, 'TaskCancelledError')) return finishCancelled(deps, task, message.replace(/^task cancelled at /, ''));
  deps.logger.warn({ task_id: task.id, err: error }, 'task failed');
  await failTask(deps, task, hasErrorName(error, 'TaskTimeoutError') ? 'TIMEOUT' : 'FAILED', message);
}
