import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { parkUntilSignal } from '../../task-state/waits.ts';
import { TaskCancelledError, TaskParkedError } from './control-errors.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

/** A wait for a named signal (task-state/waits.ts): how to read its state, and what that state says. */
export interface SignalWait<S> {
  signal: string;
  /** Where the wait is, as a cancellation names it: a checkpoint's name, `approval`. */
  place: string;
  read(): Promise<S>;
  arrived(state: S): boolean;
  cancelled(state: S): boolean;
  /**
   * Names of the steps that read and park when the wait runs between steps, so a replay takes the same path.
   * Absent when it runs inside a step (an agent's tool loop), whose re-run reads again.
   */
  steps?: { read: string; park: string };
}

/**
 * Waits, durably, for the signal: returns its state once it has come. Until then the task parks: its workflow
 * ends here, holding no worker, and the signal's delivery rewinds it to the park, whose re-run reads the
 * signal again. A cancel ends the wait (TaskCancelledError). `first` is a state the caller already read.
 */
export async function waitForSignal<S>(deps: Deps, task: TaskSnapshot, wait: SignalWait<S>, first?: S): Promise<S> {
  const inStep = <T>(name: string | undefined, work: () => Promise<T>) => (name === undefined ? work() : runTaskStep(deps, name, work));
  let state = first ?? await inStep(wait.steps?.read, wait.read);
  for (;;) {
    if (wait.cancelled(state)) throw new TaskCancelledError(wait.place);
    if (wait.arrived(state)) return state;
    if (await inStep(wait.steps?.park, () => parkUntilSignal(deps, task.id, wait.signal, currentStepId()))) throw new TaskParkedError(wait.place);
    state = await inStep(wait.steps?.read, wait.read);
  }
}
