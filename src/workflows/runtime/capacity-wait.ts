import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { enqueueParked, parkedCallState, type CapacityWaitError } from '../../llm/capacity-queue.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { CAPACITY_SIGNAL, deliverSignal, openWait } from '../../task-state/waits.ts';
import { waitForSignal } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

/**
 * A task's model call that would wait too long for its deployment's capacity (CapacityWaitError) parks the task
 * at the call's step: the call joins the deployment's queue and the task waits for the `capacity` signal, holding
 * no worker. The grant loop (llm/capacity-queue.ts, run by every process) counts the capacity for the calls in
 * turn and wakes their tasks; the step's re-run comes back to the call, which finds its grant. Returns when the
 * grant came before the park took hold: the caller calls again. A cancel ends the wait; a pause holds the task
 * past its grant until the resume.
 */
export async function waitForCapacity(deps: Deps, task: TaskSnapshot, call: { callKey: string; agentId: string }, waiting: CapacityWaitError): Promise<void> {
  const { callKey } = call;
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    await enqueueParked(transaction, task.id, callKey, waiting.queued);
    await openWait(transaction, task.id, CAPACITY_SIGNAL);
    return { events: [capacityWaitEvent(call, waiting)] };
  });
  void deps.models.traffic.grantParked(wakeForCapacity(deps), deps.stopping).catch((error: unknown) => deps.logger.error({ err: error }, 'capacity grants failed'));
  await waitForSignal(deps, task, {
    signal: CAPACITY_SIGNAL,
    place: 'provider_capacity',
    read: () => readCapacityWait(deps, task.id, callKey),
    arrived: (state) => state.call !== 'waiting',
    cancelled: (state) => state.cancelRequested,
  });
}

/** Says once per call that the agent waits for its provider, so a client sees why nothing streams. */
function capacityWaitEvent(call: { callKey: string; agentId: string }, waiting: CapacityWaitError): NewTaskEvent {
  const { provider } = waiting.queued;
  return {
    type: 'WAITING', agentId: call.agentId, message: `Waiting for capacity at provider ${provider}`,
    payload: { reason: 'provider_capacity', provider }, dedupeKey: `${call.callKey}:capacity-wait`,
  };
}

/** Wakes a task one of whose calls was granted capacity. */
export const wakeForCapacity = (deps: Deps) => async (taskId: string): Promise<void> => {
  await deliverSignal(deps, taskId, CAPACITY_SIGNAL, async () => undefined);
};

async function readCapacityWait(deps: Deps, taskId: string, callKey: string) {
  const { rows: [task] } = await sql<{ cancel_requested: boolean }>`select cancel_requested from tasks where id = ${taskId}`.execute(deps.db);
  return { cancelRequested: task?.cancel_requested ?? true, call: await parkedCallState(deps.db, callKey) };
}
