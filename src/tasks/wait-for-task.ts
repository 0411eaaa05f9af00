import type { TaskStatus } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { whenAborted } from '../http/when-aborted.ts';
import { isTerminal } from '../task-state/statuses.ts';

/**
 * Waits until the task reaches `wanted` (or any terminal status) or the timeout passes, woken by the
 * task's events (any process) with a slow poll as a safety net. Returns the last status seen.
 */
export async function waitForTaskStatus(deps: Deps, taskId: string, timeoutMs: number, wanted?: TaskStatus, signal?: AbortSignal): Promise<TaskStatus> {
  const deadline = Date.now() + timeoutMs;
  let wake: () => void = () => {};
  const unsubscribe = deps.events.subscribe(taskId, () => wake());
  // `signal` is the process's hand-over for every request waiting on a completion: one listener shared by all.
  const stopWatching = signal ? whenAborted(signal, () => wake()) : () => {};
  try {
    for (;;) {
      const row = await deps.db.selectFrom('tasks').select('status').where('id', '=', taskId).executeTakeFirstOrThrow();
      if (row.status === wanted || isTerminal(row.status) || Date.now() >= deadline || signal?.aborted) return row.status;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(1_000, Math.max(0, deadline - Date.now())));
        wake = () => { clearTimeout(timer); resolve(); };
      });
    }
  } finally {
    stopWatching();
    unsubscribe();
  }
}
