import { sql } from 'kysely';
import pRetry from 'p-retry';
import type { Deps } from '../deps.ts';
import { taskWorkflowStatus, unparkTaskWorkflow } from '../engine/engine.ts';
import { changeTask } from '../task-state/change-task.ts';
import { isTerminal } from './status-names.ts';

type Unparked = 'unparked' | 'not_parked' | 'still_parking';

class StillParking extends Error {}

/**
 * After a resume: puts the workflow of a task that parked while paused back on its queue. The workflow
 * ends a moment after it parks, and only an ended workflow can be rewound, so a resume that follows a
 * pause closely waits for that (briefly; the periodic sweep below covers anything left over).
 */
export async function unparkAfterResume(deps: Deps, taskId: string): Promise<void> {
  await pRetry(async () => {
    if (await unparkTask(deps, taskId) === 'still_parking') throw new StillParking();
  }, { retries: 20, minTimeout: 20, maxTimeout: 250, shouldRetry: ({ error }) => error instanceof StillParking })
    .catch((error: unknown) => {
      if (!(error instanceof StillParking)) throw error;
    });
}

/** Unparks every resumed task still parked: after a crash between resume and unpark, or a slow park. */
export async function unparkResumedTasks(deps: Deps): Promise<void> {
  const { rows } = await sql<{ id: string }>`
    select id from tasks
    where parked_at_step is not null and not pause_requested and status not in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')
    limit 500`.execute(deps.db);
  for (const row of rows) await unparkTask(deps, row.id);
}

/** Under the task row lock, which park takes too: a task is unparked once, and never while it parks. */
async function unparkTask(deps: Deps, taskId: string): Promise<Unparked> {
  const outcome = await changeTask<Unparked>(deps, taskId, 'request', async (transaction, task) => {
    if (task.parked_at_step === null || task.pause_requested || isTerminal(task.status)) return { result: 'not_parked' };
    if (await taskWorkflowStatus(taskId) !== 'SUCCESS') return { result: 'still_parking' };
    await unparkTaskWorkflow(taskId, task.tenant_id, task.parked_at_step);
    await transaction.updateTable('tasks').set({ parked_at_step: null }).where('id', '=', taskId).execute();
    return { result: 'unparked' };
  });
  return outcome ?? 'not_parked';
}
