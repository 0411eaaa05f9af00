import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { appendEvents, changeTask } from '../../task-state/change-task.ts';
import { TaskCancelledError, TaskParkedError } from './control-errors.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

interface ControlFlags { pauseRequested: boolean; cancelRequested: boolean }

/**
 * A named point where the workflow honours pause and cancel (spec 3.1). The control state is read in a
 * step, so a replay takes the same path. Paused, the workflow parks: it ends here and gives its worker
 * back, and resume rewinds it to this point (see tasks/unpark.ts). The time spent paused does not count
 * against the task's deadline.
 */
export async function checkpoint(deps: Deps, task: TaskSnapshot, name: string): Promise<void> {
  let flags = await readControlStep(deps, task.id, name);
  if (flags.cancelRequested) throw new TaskCancelledError(name);
  if (!flags.pauseRequested) return;
  const pausedAtMs = await runTaskStep(deps, `paused:${name}`, () => announcePaused(deps, task.id, name));
  while (flags.pauseRequested) {
    if (await runTaskStep(deps, `park:${name}`, () => park(deps, task.id))) throw new TaskParkedError(name);
    flags = await readControlStep(deps, task.id, name);
    if (flags.cancelRequested) throw new TaskCancelledError(name);
  }
  const resumedAtMs = await runTaskStep(deps, `resumed:${name}`, async () => Date.now());
  task.deadlineMs += resumedAtMs - pausedAtMs;
}

function readControlStep(deps: Deps, taskId: string, name: string): Promise<ControlFlags> {
  return runTaskStep(deps, `checkpoint:${name}`, () => readControl(deps, taskId));
}

export async function readControl(deps: Deps, taskId: string): Promise<ControlFlags> {
  const row = await deps.db.selectFrom('tasks').select(['pause_requested', 'cancel_requested'])
    .where('id', '=', taskId).executeTakeFirstOrThrow();
  return { pauseRequested: row.pause_requested, cancelRequested: row.cancel_requested };
}

async function announcePaused(deps: Deps, taskId: string, name: string): Promise<number> {
  await appendEvents(deps, taskId, 'workflow', [{
    type: 'WORKFLOW_PAUSED', agentId: 'orchestrator', message: `Task paused at ${name}`,
    payload: { checkpoint: name }, dedupeKey: `paused:${name}:${currentStepId()}`,
  }]);
  return Date.now();
}

/**
 * Marks the task parked at this step, unless a resume or cancel got in first (both take the task row, so
 * one of the two sees the other). True when the workflow is to end here.
 */
async function park(deps: Deps, taskId: string): Promise<boolean> {
  const step = currentStepId();
  const parked = await changeTask(deps, taskId, 'workflow', async (transaction, task) => {
    if (!task.pause_requested || task.cancel_requested) return { result: false };
    await transaction.updateTable('tasks').set({ parked_at_step: step }).where('id', '=', taskId).execute();
    return { result: true };
  });
  return parked === true;
}
