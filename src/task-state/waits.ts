import { sql } from 'kysely';
import pRetry from 'p-retry';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import { taskWorkflowStatus, unparkTaskWorkflow } from '../engine/engine.ts';
import { changeTask, type TaskChange, type TaskStateDeps } from './change-task.ts';
import { isTerminal } from './statuses.ts';

/**
 * The one durable wait (issue 27). A task waits for a named signal: the wait opens (a row of `task_waits`) with
 * whatever causes it, the workflow parks while it is open (it ends, holding no worker; `parkUntilSignal`), and
 * the signal's delivery closes it in the same transaction as what it brings and wakes the task
 * (`deliverSignal`); a task's waits close when it ends (change-task.ts). Woken, the workflow is rewound to the step where it parked, and reads what the signal brought.
 */
export const PAUSE_SIGNAL = 'pause';
const APPROVAL_WAIT = 'approval';
export const approvalSignal = (approvalId: string) => `${APPROVAL_WAIT}:${approvalId}`;
/** A research task's plan waits for its owner's approval (issue 27 Scope 6). */
export const PLAN_REVIEW_SIGNAL = 'plan-review';
/** A task's model call waits for its provider deployment's capacity (llm/capacity-queue.ts). */
export const CAPACITY_SIGNAL = 'capacity';
const OUTAGE_WAIT = 'provider-outage';
/** A task's model call waits to be tried again after every candidate failed for a passing reason (runtime/outage-wait.ts). */
export const outageSignal = (callKey: string) => `${OUTAGE_WAIT}:${callKey}`;
/** What a task can wait for: a signal's name up to its first `:` (`approval:<id>` is an approval). */
export const WAIT_KINDS = [PAUSE_SIGNAL, APPROVAL_WAIT, PLAN_REVIEW_SIGNAL, CAPACITY_SIGNAL, OUTAGE_WAIT] as const;

/**
 * Opens the wait inside the caller's transaction; opening an open wait changes nothing. A wait with `dueAt` is a
 * timed one: the due-wait sweep (`deliverDueWaits`) delivers its signal at that moment.
 */
export async function openWait(transaction: Db, taskId: string, signal: string, dueAt?: Date): Promise<void> {
  await transaction.insertInto('task_waits').values({ task_id: taskId, signal, due_at: dueAt ?? null }).onConflict((conflict) => conflict.doNothing()).execute();
}

/** Delivers the signals of timed waits whose moment has come (nothing but the wake): run by every process. */
export async function deliverDueWaits(deps: TaskStateDeps): Promise<void> {
  const { rows } = await sql<{ task_id: string; signal: string }>`
    select task_id, signal from task_waits where due_at <= clock_timestamp() order by due_at limit 500`.execute(deps.db);
  for (const { task_id: taskId, signal } of rows) await deliverSignal(deps, taskId, signal, async () => undefined);
}

/**
 * Marks the task parked at `step` while its wait for `signal` is open and no cancel came (delivery and cancel
 * take the task row too, so one of the two sees the other). True when the workflow is to end here. Parts of a
 * task that wait side by side (agents of a DAG) may each park: the task resumes at the earliest step.
 */
export async function parkUntilSignal(deps: TaskStateDeps, taskId: string, signal: string, step: number): Promise<boolean> {
  const parked = await changeTask(deps, taskId, 'workflow', async (transaction, task) => {
    if (task.cancel_requested || !await isOpen(transaction, taskId, signal)) return { result: false };
    await transaction.updateTable('tasks').set({ parked_at_step: sql<number>`least(parked_at_step, ${step}::integer)` }).where('id', '=', taskId).execute();
    return { result: true };
  });
  return parked === true;
}

/**
 * Delivers `signal`: `change` records what it brings (a resume, a decision) on the locked task row, the wait
 * closes in the same transaction, and once that commits the task is woken if nothing else holds it. The one
 * way a waiting task is woken.
 */
export async function deliverSignal<T>(
  deps: TaskStateDeps, taskId: string, signal: string,
  change: (transaction: Db, task: TaskRow) => Promise<TaskChange<T> | undefined>,
): Promise<T | undefined> {
  const result = await changeTask<T>(deps, taskId, 'request', async (transaction, task) => {
    const outcome = await change(transaction, task);
    await transaction.deleteFrom('task_waits').where('task_id', '=', taskId).where('signal', '=', signal).execute();
    return outcome;
  });
  await wakeTask(deps, taskId);
  return result;
}

/** Time the task's agents waited for approvals their tool calls asked for: not counted against its deadline. */
export async function addToolApprovalWait(transaction: Db, taskId: string, waitedMs: number): Promise<void> {
  await sql`update tasks set approval_wait_ms = approval_wait_ms + ${waitedMs} where id = ${taskId}`.execute(transaction);
}

async function isOpen(transaction: Db, taskId: string, signal: string): Promise<boolean> {
  const row = await transaction.selectFrom('task_waits').select('signal').where('task_id', '=', taskId).where('signal', '=', signal).executeTakeFirst();
  return row !== undefined;
}

type Woken = 'woken' | 'not_parked' | 'held' | 'still_parking';

class StillParking extends Error {}

/**
 * Puts a parked task's workflow back on its queue once no wait holds it. The workflow ends a moment after it
 * parks, and only an ended workflow can be rewound, so a delivery that follows the park closely waits for that
 * (briefly; the periodic sweep, `wakeReleasedTasks`, covers anything left over).
 */
async function wakeTask(deps: TaskStateDeps, taskId: string): Promise<void> {
  await pRetry(async () => {
    if (await wakeIfReleased(deps, taskId) === 'still_parking') throw new StillParking();
  }, { retries: 20, minTimeout: 20, maxTimeout: 250, shouldRetry: ({ error }) => error instanceof StillParking })
    .catch((error: unknown) => {
      if (!(error instanceof StillParking)) throw error;
    });
}

/** Wakes every parked task no wait holds any more: after a crash between a delivery and its wake, or a slow park. */
export async function wakeReleasedTasks(deps: TaskStateDeps): Promise<void> {
  const { rows } = await sql<{ id: string }>`
    select id from tasks
    where parked_at_step is not null and status not in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')
      and not exists (select 1 from task_waits where task_waits.task_id = tasks.id)
    limit 500`.execute(deps.db);
  for (const row of rows) await wakeIfReleased(deps, row.id);
}

/** Under the task row lock, which a park takes too: a task is woken once, and never while it parks. */
async function wakeIfReleased(deps: TaskStateDeps, taskId: string): Promise<Woken> {
  const outcome = await changeTask<Woken>(deps, taskId, 'request', async (transaction, task) => {
    if (task.parked_at_step === null || isTerminal(task.status)) return { result: 'not_parked' };
    const holding = await transaction.selectFrom('task_waits').select('signal').where('task_id', '=', taskId).limit(1).executeTakeFirst();
    if (holding) return { result: 'held' };
    if (await taskWorkflowStatus(taskId) !== 'SUCCESS') return { result: 'still_parking' };
    await unparkTaskWorkflow(taskId, task.tenant_id, task.parked_at_step);
    await transaction.updateTable('tasks').set({ parked_at_step: null }).where('id', '=', taskId).execute();
    return { result: 'woken' };
  });
  return outcome ?? 'not_parked';
}
