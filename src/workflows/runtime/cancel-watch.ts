import type { Deps } from '../../deps.ts';
import { readControl } from './checkpoint.ts';
import { TaskCancelledError } from './control-errors.ts';

/** The key a cancel request notifies (tasks/control.ts), so that only it wakes the watches of the task. */
export const cancelWakeKey = (taskId: string) => `cancel:${taskId}`;

/**
 * Aborts work in flight as soon as the task's cancellation is requested, from any process: the cancel
 * request notifies the task's cancel key, and we check the flag (also when the listener reconnects, which
 * wakes every key, and once at the start unless `checkAtStart` is false).
 */
export async function watchForCancel(deps: Deps, taskId: string, controller: AbortController, checkAtStart = true): Promise<() => void> {
  let checking = false;
  const check = async () => {
    if (checking || controller.signal.aborted) return;
    checking = true;
    try {
      if ((await readControl(deps, taskId)).cancelRequested) controller.abort(new TaskCancelledError('in_flight'));
    } finally {
      checking = false;
    }
  };
  const unsubscribe = deps.events.subscribe(cancelWakeKey(taskId), () => { check().catch(() => {}); });
  if (checkAtStart) await check();
  return unsubscribe;
}

/**
 * Runs `work` with a signal that aborts as soon as the task's cancellation is requested, or when this process
 * hands its workflows over at shutdown. `checkAtStart: false` when the work's first commit reads the flag itself,
 * under the task row's lock: a cancel before that commit stops it there, one after it wakes the watch.
 */
export async function withCancelWatch<T>(deps: Deps, taskId: string, work: (cancel: AbortSignal) => Promise<T>, checkAtStart = true): Promise<T> {
  const cancel = new AbortController();
  const stopWatching = await watchForCancel(deps, taskId, cancel, checkAtStart);
  const signal = AbortSignal.any([cancel.signal, deps.handingOver]);
  try {
    signal.throwIfAborted();
    return await work(signal);
  } finally {
    stopWatching();
  }
}
