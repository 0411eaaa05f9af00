import { sql } from 'kysely';
import pRetry from 'p-retry';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { taskWorkflowStatus, unparkTaskWorkflow } from '../engine/engine.ts';
import { changeTask } from '../task-state/change-task.ts';
import { isTerminal } from '../task-state/statuses.ts';

type Unparked = 'unparked' | 'not_parked' | 'held' | 'still_parking';

class StillParking extends Error {}

/**
 * A task parks (its workflow ends and gives its worker back) while something holds it: a pause, or an
 * approval waiting for a decision. Once nothing does (a resume, a decision, an expiry), this puts its
 * workflow back on its queue. The workflow ends a moment after it parks, and only an ended workflow can be
 * rewound, so a release that follows the park closely waits for that (briefly; the periodic sweep below
 * covers anything left over).
 */
export async function unparkReleasedTask(deps: Deps, taskId: string): Promise<void> {
  await pRetry(async () => {
    if (await unparkTask(deps, taskId) === 'still_parking') throw new StillParking();
  }, { retries: 20, minTimeout: 20, maxTimeout: 250, shouldRetry: ({ error }) => error instanceof StillParking })
    .catch((error: unknown) => {
      if (!(error instanceof StillParking)) throw error;
    });
}

/** The resume route's name for it. */
export const unparkAfterResume = unparkReleasedTask;

/**
 * Unparks every parked task nothing holds any more: after a crash between the release and the unpark, or a
 * slow park. Tasks still waiting for a decision are left alone.
 */
export async function unparkReleasedTasks(deps: Deps): Promise<void> {
  const { rows } = await sql<{ id: string }>`
    select id from tasks
    where parked_at_step is not null and not pause_requested and status not in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')
      and not exists (select 1 from approvals where approvals.task_id = tasks.id and approvals.status = 'pending')
    limit 500`.execute(deps.db);
  for (const row of rows) await unparkTask(deps, row.id);
}

/** Under the task row lock, which park takes too: a task is unparked once, and never while it parks. */
async function unparkTask(deps: Deps, taskId: string): Promise<Unparked> {
  const outcome = await changeTask<Unparked>(deps, taskId, 'request', async (transaction, task) => {
    if (task.parked_at_step === null || isTerminal(task.status)) return { result: 'not_parked' };
    if (await isHeld(transaction, task)) return { result: 'held' };
    if (await taskWorkflowStatus(taskId) !== 'SUCCESS') return { result: 'still_parking' };
    await unparkTaskWorkflow(taskId, task.tenant_id, task.parked_at_step);
    await transaction.updateTable('tasks').set({ parked_at_step: null }).where('id', '=', taskId).execute();
    return { result: 'unparked' };
  });
  return outcome ?? 'not_parked';
}

async function isHeld(transaction: Db, task: TaskRow): Promise<boolean> {
  if (task.pause_requested) return true;
  const pending = await transaction.selectFrom('approvals').select('id')
    .where('task_id', '=', task.id).where('status', '=', 'pending').limit(1).executeTakeFirst();
  return pending !== undefined;
}
