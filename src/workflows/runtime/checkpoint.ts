import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { appendEvents } from '../../task-state/change-task.ts';
import { PAUSE_SIGNAL } from '../../task-state/waits.ts';
import { TaskCancelledError } from './control-errors.ts';
import { waitForSignal } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

export interface ControlFlags { pauseRequested: boolean; cancelRequested: boolean }

/**
 * A named point where the workflow honours pause and cancel (spec 3.1). The control state is read in a
 * step, so a replay takes the same path; a caller whose step has just read it (a swarm's round) passes it as
 * `known`, sparing a step. Paused, the task waits for the `pause` signal (runtime/durable-wait.ts),
 * which resume delivers. The time spent paused does not count against the task's deadline.
 */
export async function checkpoint(deps: Deps, task: TaskSnapshot, name: string, known?: ControlFlags): Promise<void> {
  const flags = known ?? await runTaskStep(deps, `checkpoint:${name}`, () => readControl(deps, task.id));
  if (flags.cancelRequested) throw new TaskCancelledError(name);
  if (!flags.pauseRequested) return;
  const pausedAtMs = await runTaskStep(deps, `paused:${name}`, () => announcePaused(deps, task.id, name));
  await waitForSignal(deps, task, {
    signal: PAUSE_SIGNAL, place: name, steps: { read: `checkpoint:${name}`, park: `park:${name}` },
    read: () => readControl(deps, task.id), arrived: (state) => !state.pauseRequested, cancelled: (state) => state.cancelRequested,
  }, flags);
  const resumedAtMs = await runTaskStep(deps, `resumed:${name}`, async () => Date.now());
  task.deadlineMs += resumedAtMs - pausedAtMs;
}

export async function readControl(deps: Deps, taskId: string): Promise<ControlFlags> {
  const row = await deps.db.selectFrom('tasks').select(['pause_requested', 'cancel_requested'])
    .where('id', '=', taskId).executeTakeFirstOrThrow();
  return { pauseRequested: row.pause_requested, cancelRequested: row.cancel_requested };
}

/** WORKFLOW_PAUSED: the workflow has stopped at `name`. */
export async function announcePaused(deps: Deps, taskId: string, name: string): Promise<number> {
  await appendEvents(deps, taskId, 'workflow', [{
    type: 'WORKFLOW_PAUSED', agentId: 'orchestrator', message: `Task paused at ${name}`,
    payload: { checkpoint: name }, dedupeKey: `paused:${name}:${currentStepId()}`,
  }]);
  return Date.now();
}
