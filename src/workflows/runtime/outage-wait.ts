import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { ProviderCallError } from '../../llm/provider-errors.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { openWait, outageSignal } from '../../task-state/waits.ts';
import { waitForSignal } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

/** The shortest and longest wait before a call is tried again, whatever the cooldowns say. */
const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 60_000;

/** A failure worth trying again later: every candidate failed for a passing reason before any text went out. */
export type PassingFailure = ProviderCallError & { retryInMs: number };

export const isPassingFailure = (error: unknown): error is PassingFailure =>
  error instanceof ProviderCallError && error.retryInMs !== undefined;

/**
 * A task's model call whose every candidate failed for a passing reason (overloaded, 5xx, timed out: a provider's
 * incident) does not fail its task: the task parks at the call's step, holding no worker, until a timed wait ends
 * (the first candidate's cooldown, within 2–60 s, spread by up to a quarter so that the parked calls do not come
 * back together), and the step's re-run calls again. Once the call has been failing for PROVIDER_OUTAGE_WAIT_SECONDS
 * since its first such failure (remembered across parks and restarts), the failure is thrown: the task fails naming
 * it. A cancel ends the wait; a pause holds the task past it until the resume.
 */
export async function waitOutOutage(deps: Deps, task: TaskSnapshot, call: { callKey: string; agentId: string }, failure: PassingFailure): Promise<void> {
  const { outageWaitMs } = deps.models.traffic.settings;
  const failingForMs = await recordOutage(deps.db, task.id, call.callKey);
  if (failingForMs >= outageWaitMs) {
    const seconds = Math.round(failingForMs / 1000);
    throw new ProviderCallError(`${failure.message}; still failing after ${seconds} s (PROVIDER_OUTAGE_WAIT_SECONDS)`, failure.kind, { cause: failure });
  }
  const delayMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, failure.retryInMs)) * (1 + Math.random() / 4);
  const dueAt = new Date(Date.now() + Math.min(delayMs, outageWaitMs - failingForMs));
  const signal = outageSignal(call.callKey);
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    await openWait(transaction, task.id, signal, dueAt);
    return { events: [outageWaitEvent(call, failure, new Date(Date.now() - failingForMs + outageWaitMs))] };
  });
  await waitForSignal(deps, task, {
    signal,
    place: 'provider_outage',
    read: () => readOutageWait(deps.db, task.id, signal),
    arrived: (state) => !state.isOpen,
    cancelled: (state) => state.cancelRequested,
  });
}

/** Notes the call's first failure (once) and answers how long it has been failing since. */
async function recordOutage(db: Db, taskId: string, callKey: string): Promise<number> {
  const { rows: [row] } = await sql<{ failing_ms: number }>`
    insert into model_call_outages (call_key, task_id) values (${callKey}, ${taskId})
    on conflict (call_key) do update set call_key = excluded.call_key
    returning extract(epoch from clock_timestamp() - since) * 1000 as failing_ms`.execute(db);
  return Number(row.failing_ms);
}

/** Says once per call why its agent is quiet, and until when it will be tried. */
function outageWaitEvent(call: { callKey: string; agentId: string }, failure: PassingFailure, givesUpAt: Date): NewTaskEvent {
  return {
    type: 'WAITING', agentId: call.agentId, message: 'Waiting for the model providers to recover; the call will be tried again',
    payload: { reason: 'provider_outage', error: failure.message, gives_up_at: givesUpAt.toISOString() },
    dedupeKey: `${call.callKey}:outage-wait`,
  };
}

async function readOutageWait(db: Db, taskId: string, signal: string) {
  const { rows: [row] } = await sql<{ cancel_requested: boolean; is_open: boolean }>`
    select cancel_requested, exists (select 1 from task_waits where task_id = ${taskId} and signal = ${signal}) as is_open
    from tasks where id = ${taskId}`.execute(db);
  return { cancelRequested: row?.cancel_requested ?? true, isOpen: row?.is_open ?? false };
}

/** The record of calls' first failures, past any use (PROVIDER_OUTAGE_WAIT_SECONDS is at most a day). */
export async function purgeOldOutages(db: Db): Promise<void> {
  await sql`delete from model_call_outages where since < clock_timestamp() - interval '2 days'`.execute(db);
}
