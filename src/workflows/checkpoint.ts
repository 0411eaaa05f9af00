import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { waitForSignal } from '../engine/engine.ts';
import { appendEvents } from '../task-state/change-task.ts';
import { TaskCancelledError } from './control-errors.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

/** A paused workflow re-reads its control state at least this often, even without a signal. */
const PAUSE_POLL_SECONDS = 60;

interface ControlFlags { pauseRequested: boolean; cancelRequested: boolean }

/**
 * A named point where the workflow honours pause and cancel (spec 3.1). The control state is read in a
 * step, so a replay takes the same path. Paused, the workflow waits durably for a signal; the time spent
 * paused does not count against the task's deadline.
 */
export async function checkpoint(deps: Deps, task: TaskSnapshot, name: string): Promise<void> {
  let flags = await readControlStep(deps, task.id, name);
  if (flags.cancelRequested) throw new TaskCancelledError(name);
  if (!flags.pauseRequested) return;
  const pausedAtMs = await runTaskStep(deps, `paused:${name}`, () => announcePaused(deps, task.id, name));
  while (flags.pauseRequested) {
    await waitForSignal(PAUSE_POLL_SECONDS);
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
    payload: { checkpoint: name }, dedupeKey: `paused:${name}:${DBOS.stepID}`,
  }]);
  return Date.now();
}
