import type { Deps } from '../../deps.ts';
import { readControl } from './checkpoint.ts';
import { TaskCancelledError } from './control-errors.ts';

/**
 * Aborts work in flight as soon as the task's cancellation is requested, from any process: every
 * event of the task wakes us (the cancel request appends WORKFLOW_CANCELLING), and we check the flag.
 */
export async function watchForCancel(deps: Deps, taskId: string, controller: AbortController): Promise<() => void> {
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
  const unsubscribe = deps.events.subscribe(taskId, () => { check().catch(() => {}); });
  await check();
  return unsubscribe;
}
