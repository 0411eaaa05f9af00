import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { workerLanes } from '../../src/engine/engine.ts';
import { openPool } from '../submit/database-pool.ts';
import { runLoad } from '../submit/load.ts';
import { CONNECTIONS, QUIET_PERCENT, QUIET_TIMEOUT_MS } from '../submit/measure-load.ts';
import { waitForQuietMachine } from '../submit/quiet-machine.ts';
import { waitUntilIdle } from '../submit/task-completions.ts';
import { checkExactlyOnce, type ExactlyOnce } from './exactly-once.ts';
import { countConnections } from './follow-run.ts';
import type { ScaleContext } from './scale-context.ts';
import { startGatewayOnly, startWorker, workerIds, type Worker } from './service-processes.ts';

export const MOCK_DELAY_MS = 3_000;
const BOTH_RUNNING_TIMEOUT_MS = 20_000;
const POLL_INTERVAL_MS = 50;
/** After detection, the hand-over and the re-run (a few seconds) must fit in this. */
const AFTER_DETECTION_TIMEOUT_MS = 90_000;

export interface RecoveryResult {
  deadAfterSeconds: number;
  tasks: number;
  /** Tasks the engine showed running on the killed worker just before the kill, and on the survivor. */
  onKilled: number;
  onSurvivor: number;
  /** Connections the three processes held just before the kill, every task running. */
  connections: number;
  /** Seconds from the kill (all times on this machine's one clock, Postgres's included). */
  lastHeartbeatBeforeKill: number;
  detected: number;
  /** The last ERROR_RECOVERY event written (each is written after its task went back on the queue). */
  handedOver: number;
  /** The last of its tasks taken from the queue again (the engine's started_at_epoch_ms). */
  lastRestarted: number;
  lastCompleted: number;
  /** completed_at − restart of each of its tasks, seconds. */
  rerun: { p50: number; max: number };
  /** ERROR_RECOVERY events naming the killed worker, and how many of its tasks have one. */
  recoveryEvents: number;
  itsTasksWithRecoveryEvent: number;
  recoveredBy: string | null;
  exactlyOnce: ExactlyOnce;
  busyBefore: number;
}

/**
 * Scenario 3: a gateway-only process and two workers; as many simple tasks as both workers run at once for the
 * one tenant, each answering over MOCK_DELAY_MS. Once every task runs, one worker is killed (SIGKILL, never
 * restarted), and the time until the last of its tasks completes on the other worker is taken apart.
 */
export async function benchmarkRecovery(context: ScaleContext, deadAfterSeconds: number): Promise<RecoveryResult> {
  const { log } = context;
  const settings = { ...context.settings, EXECUTOR_DEAD_AFTER_SECONDS: String(deadAfterSeconds) };
  const databaseName = `scale_recovery_${deadAfterSeconds}`;
  const databaseUrl = await context.postgres.createDatabase(databaseName);
  const services = { root: context.root, databaseUrl, settings };
  const gateway = await startGatewayOnly(services);
  const pool = openPool(databaseUrl, 2);
  let workers: Worker[] = [];
  try {
    workers = await Promise.all(workerIds(2).map((id) => startWorker(services, id)));
    const [killed, survivor] = workers;
    const tasks = 2 * tasksOneWorkerRuns(settings);
    const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
    log(`recovery (EXECUTOR_DEAD_AFTER_SECONDS=${deadAfterSeconds}): ${tasks} tasks of ${MOCK_DELAY_MS} ms on two workers`);
    await runLoad({
      url: `${gateway.url}/api/v1/tasks`, connections: CONNECTIONS, durationSeconds: 0, amount: tasks, label: 'recovery',
      fields: { mode: 'simple', context: { mock_delay_ms: MOCK_DELAY_MS } },
    });
    const running = await waitUntilBothRun(pool, workers);
    const connections = await countConnections(pool);
    const killedAtMs = Date.now();
    await killed.kill();
    log(`killed ${killed.executorId} with ${running[killed.executorId].length} tasks running; waiting for them on ${survivor.executorId}`);
    await waitUntilIdle(pool, (deadAfterSeconds * 1000) + AFTER_DETECTION_TIMEOUT_MS);
    return {
      deadAfterSeconds, tasks, busyBefore, connections,
      onKilled: running[killed.executorId].length, onSurvivor: running[survivor.executorId].length,
      ...await breakDownRecovery(pool, killed.executorId, running[killed.executorId], killedAtMs),
      exactlyOnce: await checkExactlyOnce(pool),
    };
  } finally {
    for (const worker of workers) await worker.stop();
    await gateway.stop();
    await pool.end();
    await context.postgres.dropDatabase(databaseName);
  }
}

/** One worker-only process runs at most this many tasks of one tenant at once (all the benchmark's tasks are one tenant's). */
function tasksOneWorkerRuns(settings: Record<string, string>): number {
  const config = loadConfig(settings, 'worker');
  return workerLanes('worker', config.workerConcurrency, config.tenantWorkerLimit).queue.perTenant;
}

/** Waits until no task is left on the queue and both workers run some; returns the running tasks by executor. */
async function waitUntilBothRun(pool: pg.Pool, workers: Worker[]): Promise<Record<string, string[]>> {
  const deadline = Date.now() + BOTH_RUNNING_TIMEOUT_MS;
  for (;;) {
    const { rows } = await pool.query<{ executor_id: string | null; status: string; ids: string[] }>(`
      select executor_id, status, array_agg(workflow_uuid) as ids from dbos.workflow_status
      where name = 'agentgate.task' and status in ('ENQUEUED', 'PENDING') group by executor_id, status`);
    const running = Object.fromEntries(rows.filter((row) => row.status === 'PENDING').map((row) => [row.executor_id, row.ids]));
    const isQueueEmpty = !rows.some((row) => row.status === 'ENQUEUED');
    if (isQueueEmpty && workers.every((worker) => running[worker.executorId]?.length > 0)) return running;
    if (Date.now() >= deadline) {
      const seen = rows.map((row) => [row.executor_id, row.status, row.ids.length]);
      throw new Error(`both workers did not run tasks within ${BOTH_RUNNING_TIMEOUT_MS} ms: ${JSON.stringify(seen)}`);
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

type Breakdown = Omit<RecoveryResult, 'deadAfterSeconds' | 'tasks' | 'onKilled' | 'onSurvivor' | 'connections' | 'exactlyOnce' | 'busyBefore'>;

/** The killed worker's lease, its detection, the hand-over events and its tasks' second runs, in seconds from the kill. */
async function breakDownRecovery(pool: pg.Pool, executorId: string, taskIds: string[], killedAtMs: number): Promise<Breakdown> {
  const { rows: [row] } = await pool.query(`
    with its_tasks as (
      select t.completed_at, to_timestamp(w.started_at_epoch_ms / 1000.0) as restarted_at
      from tasks t join dbos.workflow_status w on w.workflow_uuid = t.id::text where t.id = any($2::uuid[]))
    select extract(epoch from e.heartbeat_at) * 1000 as heartbeat_ms, extract(epoch from e.recovered_at) * 1000 as detected_ms,
           e.recovered_by,
           (select count(*)::int from task_events where type = 'ERROR_RECOVERY' and payload->>'executor_id' = $1) as recovery_events,
           (select count(distinct task_id)::int from task_events where type = 'ERROR_RECOVERY' and payload->>'executor_id' = $1
              and task_id = any($2::uuid[])) as its_tasks_with_event,
           (select extract(epoch from max(created_at)) * 1000 from task_events where type = 'ERROR_RECOVERY' and payload->>'executor_id' = $1) as handed_over_ms,
           (select extract(epoch from max(restarted_at)) * 1000 from its_tasks) as restarted_ms,
           (select extract(epoch from max(completed_at)) * 1000 from its_tasks) as completed_ms,
           (select percentile_disc(0.5) within group (order by extract(epoch from completed_at - restarted_at)) from its_tasks) as rerun_p50,
           (select max(extract(epoch from completed_at - restarted_at)) from its_tasks) as rerun_max
    from executors e where e.id = $1`, [executorId, taskIds]);
  const sinceKill = (ms: string | number | null) => (ms === null ? Number.NaN : (Number(ms) - killedAtMs) / 1000);
  return {
    lastHeartbeatBeforeKill: sinceKill(row.heartbeat_ms),
    detected: sinceKill(row.detected_ms),
    handedOver: sinceKill(row.handed_over_ms),
    lastRestarted: sinceKill(row.restarted_ms),
    lastCompleted: sinceKill(row.completed_ms),
    rerun: { p50: Number(row.rerun_p50), max: Number(row.rerun_max) },
    recoveryEvents: row.recovery_events,
    itsTasksWithRecoveryEvent: row.its_tasks_with_event,
    recoveredBy: row.recovered_by,
  };
}
