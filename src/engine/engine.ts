import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Logger } from 'pino';
import type { ProcessRole } from '../config.ts';

export const TASK_QUEUE = 'agentgate-tasks';

/**
 * Fixed so that a restart on edited code still recovers the tasks in flight: left unset, DBOS derives
 * it from a hash of the workflow code and would leave earlier workflows unrecovered (STYLE.md §6).
 */
const APPLICATION_VERSION = 'agentgate-1';

export interface EngineOptions {
  databaseUrl: string;
  role: ProcessRole;
  workerConcurrency: number;
  /** The most workers of this process one tenant's tasks may hold: the queue is partitioned by tenant. */
  tenantWorkerLimit: number;
  executorId: string;
  logger: Logger;
}

/** Launches DBOS on our own database. Every workflow must already be registered. */
export async function launchEngine(options: EngineOptions): Promise<void> {
  const log = options.logger.child({ component: 'dbos' });
  DBOS.setConfig({
    name: 'agentgate',
    systemDatabaseUrl: withIdleTransactionTimeout(options.databaseUrl),
    systemDatabasePoolSize: 20,
    applicationVersion: APPLICATION_VERSION,
    executorID: options.executorId,
    // A gateway-only process enqueues but never dequeues; workers and `all` take from the task queue.
    listenQueues: options.role === 'gateway' ? [] : undefined,
    logger: {
      info: (entry) => log.debug(String(entry)),
      debug: (entry) => log.trace(String(entry)),
      warn: (entry) => log.warn(String(entry)),
      error: (entry) => log.error({ err: entry }, 'engine error'),
    },
  });
  await DBOS.launch();
  await DBOS.registerQueue(TASK_QUEUE, {
    workerConcurrency: options.workerConcurrency,
    partitionWorkerConcurrency: Math.min(options.tenantWorkerLimit, options.workerConcurrency),
    // Short polls keep queue latency low; DBOS backs off while the queue is idle.
    minPollingIntervalMs: 50,
    onConflict: 'always_update',
  });
}

/**
 * The engine ends sessions left idle inside a transaction. Left to itself it sets that with a query queued on
 * each new connection, which the driver reports as a deprecated concurrent query; given in the connection
 * string it is part of the session's start-up instead.
 */
function withIdleTransactionTimeout(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const options = url.searchParams.get('options') ?? '';
  if (options.includes('idle_in_transaction_session_timeout')) return databaseUrl;
  url.searchParams.set('options', `${options} -c idle_in_transaction_session_timeout=60000`.trim());
  return url.toString();
}

export async function shutdownEngine(): Promise<void> {
  if (DBOS.isInitialized()) await DBOS.shutdown();
}

export async function isEngineHealthy(): Promise<boolean> {
  if (!DBOS.isInitialized()) return false;
  await DBOS.listQueues();
  return true;
}

/**
 * Enqueues a task's workflow under the task id, in its tenant's partition of the queue; DBOS returns the
 * existing workflow for a repeated id.
 */
export async function enqueueTaskWorkflow(workflow: (taskId: string) => Promise<void>, taskId: string, tenantId: string): Promise<void> {
  await DBOS.startWorkflow(workflow, { workflowID: taskId, queueName: TASK_QUEUE, enqueueOptions: { queuePartitionKey: tenantId } })(taskId);
}

/** The state of a task's workflow in the engine (ENQUEUED, PENDING, SUCCESS, …); undefined when it has none. */
export async function taskWorkflowStatus(taskId: string): Promise<string | undefined> {
  return (await DBOS.getWorkflowStatus(taskId))?.status;
}

/**
 * Puts a parked task's workflow back on the queue: its history from `step` on is dropped, so the replay
 * returns the recorded results up to the checkpoint where it parked and runs on from there.
 */
export async function unparkTaskWorkflow(taskId: string, tenantId: string, step: number): Promise<void> {
  await DBOS.rewindWorkflow(taskId, { startStep: step, queueName: TASK_QUEUE, queuePartitionKey: tenantId });
}

/** Creates or upgrades the engine's own tables (schema `dbos`) without launching it. */
export async function migrateEngine(databaseUrl: string): Promise<void> {
  await DBOS.migrate(databaseUrl);
}

/** Removes a task that is still queued; a running workflow stops at its own checkpoints instead. */
export async function cancelQueuedWorkflow(taskId: string): Promise<void> {
  const status = await DBOS.getWorkflowStatus(taskId);
  if (status?.status === 'ENQUEUED') await DBOS.cancelWorkflow(taskId);
}
