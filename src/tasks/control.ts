import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import { ensureOwnedTask } from '../auth/ownership.ts';
import type { Db } from '../db/database.ts';
import type { TaskRow, TaskStatus } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { cancelQueuedWorkflow } from '../engine/engine.ts';
import { AppError, conflict } from '../errors.ts';
import type { NewTaskEvent } from '../events/append-event.ts';
import { EVENTS_CHANNEL } from '../events/event-hub.ts';
import { changeTask } from '../task-state/change-task.ts';
import { isWaitingForReview, markCancelRequested, markPauseRequested, markResumed } from '../task-state/control-flags.ts';
import { deliverSignal, PAUSE_SIGNAL } from '../task-state/waits.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { toStatusName } from './status-names.ts';
import { cancelWakeKey } from '../workflows/runtime/cancel-watch.ts';
import { waitForTaskStatus } from './wait-for-task.ts';

/** How 409 messages name a state (spec 3.1 / 7: `cannot pause <state> task`). */
const STATE_WORDS: Record<TaskStatus, string> = {
  QUEUED: 'queued', RUNNING: 'running', PAUSED: 'paused', COMPLETED: 'completed',
  FAILED: 'failed', CANCELLED: 'cancelled', TIMEOUT: 'timed out',
};
const CANCEL_WAIT_MS = 3_000;

export interface ControlRequest { reason?: string }

/**
 * Pause takes effect at the workflow's next checkpoint; the status reads PAUSED from the moment the
 * request is accepted (a queued task is held before it starts).
 */
export async function pauseTask(deps: Deps, caller: Caller, taskId: string, request: ControlRequest) {
  await changeOwnedTask(deps, caller, taskId, async (transaction, task) => {
    if (isTerminal(task.status)) throw conflict(`cannot pause ${STATE_WORDS[task.status]} task`);
    if (task.cancel_requested) throw conflict('cannot pause a task that is being cancelled');
    if (task.pause_requested || isWaitingForReview(task)) throw conflict('task is already paused');
    await markPauseRequested(transaction, task.id, { by: caller.userId, reason: request.reason ?? null });
    return [{
      type: 'WORKFLOW_PAUSING', agentId: 'orchestrator', message: 'Pause requested',
      payload: { reason: request.reason ?? null, requested_by: caller.userId },
    }];
  });
  return { success: true, message: 'Pause signal sent', task_id: taskId };
}

/** Resume delivers the `pause` signal the task waits for (task-state/waits.ts). */
export async function resumeTask(deps: Deps, caller: Caller, taskId: string, request: ControlRequest) {
  await deliverSignal(deps, taskId, PAUSE_SIGNAL, async (transaction, owned) => {
    const task = ensureOwnedTask(caller, owned);
    if (isTerminal(task.status)) throw conflict(`cannot resume ${STATE_WORDS[task.status]} task`);
    if (isWaitingForReview(task)) throw conflict(`task is waiting for the review of its research plan: approve the plan (POST /api/v1/tasks/${task.id}/review) to continue`);
    if (!task.pause_requested) throw conflict('task is not paused');
    await markResumed(transaction, task);
    return {
      events: [{
        type: 'WORKFLOW_RESUMED', agentId: 'orchestrator', message: 'Task resumed',
        payload: { reason: request.reason ?? null, requested_by: caller.userId },
      }],
    };
  });
  return { success: true, message: 'Resume signal sent', task_id: taskId };
}

/**
 * A task no worker runs (queued, or parked while paused) is cancelled at once. A running one is asked to
 * stop: its in-flight model call is aborted (the worker listens for this) and the workflow records
 * CANCELLED at its next checkpoint. We wait briefly for that so the answer usually carries the final
 * status; a task whose worker is down is cancelled when it comes back, and the answer says so with 202.
 */
export async function cancelTask(deps: Deps, caller: Caller, taskId: string, request: ControlRequest) {
  let wasQueued = false;
  let notRunning = false;
  await changeOwnedTask(deps, caller, taskId, async (transaction, task) => {
    if (isTerminal(task.status)) {
      throw new AppError(409, `cannot cancel ${STATE_WORDS[task.status]} task`, {
        extras: { success: false, message: `cannot cancel ${STATE_WORDS[task.status]} task`, status: toStatusName(task.status) },
      });
    }
    if (task.cancel_requested) return [];
    wasQueued = task.status === 'QUEUED' || (task.status === 'PAUSED' && !task.started_at);
    notRunning = wasQueued || task.parked_at_step !== null;
    await markCancelRequested(transaction, task.id, {
      by: caller.userId, reason: request.reason ?? null,
      endedWith: notRunning ? (wasQueued ? 'cancelled before it started' : 'cancelled while paused') : undefined,
    });
    // Delivered at commit, to every process: the task's cancel watches abort the work in flight.
    await sql`select pg_notify(${EVENTS_CHANNEL}, ${cancelWakeKey(task.id)})`.execute(transaction);
    return [
      { type: 'WORKFLOW_CANCELLING', agentId: 'orchestrator', message: 'Cancellation requested', payload: { reason: request.reason ?? null, requested_by: caller.userId } },
      ...(notRunning ? [
        { type: 'WORKFLOW_CANCELLED', agentId: 'orchestrator', message: 'Task cancelled', payload: { checkpoint: wasQueued ? 'queued' : 'paused', was_paused: task.pause_requested } },
        { type: 'STREAM_END', message: 'Stream ended' },
      ] : []),
    ];
  });
  deps.events.wake(cancelWakeKey(taskId));
  if (wasQueued) await cancelQueuedWorkflow(taskId);
  const status = notRunning ? 'CANCELLED' : await waitForTaskStatus(deps, taskId, CANCEL_WAIT_MS, 'CANCELLED');
  const done = status === 'CANCELLED';
  return {
    statusCode: done ? 200 : 202,
    body: {
      success: true,
      message: done ? 'Task cancelled successfully' : 'Cancellation requested; it takes effect at the task\'s next checkpoint',
      status: toStatusName(status),
    },
  };
}

export async function getControlState(deps: Deps, caller: Caller, taskId: string) {
  const task = ensureOwnedTask(caller, await deps.db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirst());
  return {
    is_paused: (task.pause_requested || isWaitingForReview(task)) && !isTerminal(task.status),
    is_cancelled: task.cancel_requested || task.status === 'CANCELLED',
    paused_at: task.paused_at?.toISOString() ?? '',
    pause_reason: task.pause_reason ?? '',
    paused_by: task.paused_by ?? '',
    cancel_reason: task.cancel_reason ?? '',
    cancelled_by: task.cancelled_by ?? '',
  };
}

/** A control change on the caller's task, through the one writer of task state. */
async function changeOwnedTask(deps: Deps, caller: Caller, taskId: string, change: (transaction: Db, task: TaskRow) => Promise<NewTaskEvent[]>) {
  await changeTask(deps, taskId, 'request', async (transaction, task) => ({ events: await change(transaction, ensureOwnedTask(caller, task)) }));
}
