import type pg from 'pg';
import { openPool } from '../submit/database-pool.ts';
import { databaseWorkBetween, markDatabase, perTask, type WorkPerTask } from '../submit/database-work.ts';
import { runLoad } from '../submit/load.ts';
import { CONNECTIONS, QUIET_PERCENT, QUIET_TIMEOUT_MS } from '../submit/measure-load.ts';
import { waitForQuietMachine } from '../submit/quiet-machine.ts';
import { waitUntilIdle } from '../submit/task-completions.ts';
import { readCpu, type CpuReading } from './cpu-split.ts';
import type { ScaleContext } from './scale-context.ts';
import { startGatewayOnly, startWorker, workerIds, type Worker } from './service-processes.ts';

const DRAIN_TIMEOUT_MS = 300_000;

interface TaskKind {
  name: string;
  /** The fields of its submissions beside the query. */
  fields: Record<string, unknown>;
}

const DAG_PLAN = {
  complexity_score: 0.6, execution_strategy: 'parallel',
  subtasks: ['rivers', 'mountains', 'lakes'].map((topic, index) => ({ id: `task-${index + 1}`, description: `List three ${topic}` })),
};

/** A streamed answer writes a token-delta event at most every EVENT_PARTIAL_INTERVAL_MS while it streams. */
const STREAMED_MS = 2_000;

export const TASK_KINDS: TaskKind[] = [
  { name: 'simple (`mode: simple`: one agent)', fields: { mode: 'simple' } },
  { name: `simple, its answer streamed over ${STREAMED_MS / 1000} s`, fields: { mode: 'simple', context: { mock_delay_ms: STREAMED_MS } } },
  { name: 'planned (no mode: a decomposition call, then one agent)', fields: {} },
  { name: 'DAG (no mode, decomposed into 3 parallel agents, then a synthesis)', fields: { context: { mock_plan: DAG_PLAN } } },
];

export interface TaskKindResult {
  name: string;
  tasks: number;
  completed: number;
  /** Usage rows, DBOS step records and events per task. */
  modelCalls: number;
  engineSteps: number;
  events: number;
  work: WorkPerTask;
  /** How much the database grew per task (tables and indexes, the engine's included), bytes. */
  storedBytes: number;
  /** CPU milliseconds per task of Postgres, of the gateway (submission) and of the worker (execution). */
  cpuMs: { postgres: number; gateway: number; worker: number };
  busyBefore: number;
}

/**
 * Database work per task of each kind, submission and execution together: a gateway-only process and one
 * worker on a database of their own; each kind's tasks are submitted and drained before the next kind's.
 */
export async function measureTaskKinds(context: ScaleContext, tasksPerKind: number): Promise<TaskKindResult[]> {
  const databaseName = 'scale_task_kinds';
  const databaseUrl = await context.postgres.createDatabase(databaseName);
  const services = { root: context.root, databaseUrl, settings: context.settings };
  const gateway = await startGatewayOnly(services);
  const pool = openPool(databaseUrl, 2);
  let workers: Worker[] = [];
  try {
    workers = [await startWorker(services, workerIds(1)[0])];
    const targets = { gatewayPid: gateway.pid, workerPids: workers.map((worker) => worker.pid), clusterDir: context.postgres.clusterDir };
    const results: TaskKindResult[] = [];
    for (const kind of TASK_KINDS) {
      const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, context.log);
      context.log(`database work per task: ${tasksPerKind} tasks, ${kind.name}`);
      const since = await databaseNow(pool);
      const sizeBefore = await databaseSize(pool);
      const before = await markDatabase(pool);
      const cpuBefore = await readCpu(targets);
      await runLoad({
        url: `${gateway.url}/api/v1/tasks`, connections: CONNECTIONS, durationSeconds: 0, amount: tasksPerKind, label: 'kind', fields: kind.fields,
      });
      await waitUntilIdle(pool, DRAIN_TIMEOUT_MS);
      const cpuMs = cpuMillisecondsPerTask(cpuBefore, await readCpu(targets), tasksPerKind);
      const work = await databaseWorkBetween(pool, before, await markDatabase(pool));
      const storedBytes = (await databaseSize(pool) - sizeBefore) / tasksPerKind;
      results.push({
        name: kind.name, tasks: tasksPerKind, ...await countPerTask(pool, since, tasksPerKind),
        work: perTask(work, tasksPerKind), storedBytes, cpuMs, busyBefore,
      });
    }
    return results;
  } finally {
    for (const worker of workers) await worker.stop();
    await gateway.stop();
    await pool.end();
    await context.postgres.dropDatabase(databaseName);
  }
}

async function databaseNow(pool: pg.Pool): Promise<Date> {
  const { rows: [row] } = await pool.query<{ now: Date }>('select clock_timestamp() as now');
  return row.now;
}

function cpuMillisecondsPerTask(before: CpuReading, after: CpuReading, tasks: number): TaskKindResult['cpuMs'] {
  const milliseconds = (seconds: number) => (1000 * seconds) / tasks;
  return {
    postgres: milliseconds(after.postgres - before.postgres), gateway: milliseconds(after.gateway - before.gateway),
    worker: milliseconds(after.workers[0] - before.workers[0]),
  };
}

async function databaseSize(pool: pg.Pool): Promise<number> {
  const { rows: [row] } = await pool.query<{ bytes: number }>('select pg_database_size(current_database()) as bytes');
  return Number(row.bytes);
}

async function countPerTask(pool: pg.Pool, since: Date, tasks: number): Promise<Pick<TaskKindResult, 'completed' | 'modelCalls' | 'engineSteps' | 'events'>> {
  const { rows: [row] } = await pool.query<{ completed: number; usage: number; steps: number; events: number }>(`
    with run as (select id from tasks where created_at >= $1)
    select (select count(*)::int from tasks where id in (select id from run) and status = 'COMPLETED') as completed,
           (select count(*)::int from usage_records where task_id in (select id from run)) as usage,
           (select count(*)::int from dbos.operation_outputs where workflow_uuid in (select id::text from run)) as steps,
           (select count(*)::int from task_events where task_id in (select id from run)) as events`, [since]);
  return { completed: row.completed, modelCalls: row.usage / tasks, engineSteps: row.steps / tasks, events: row.events / tasks };
}
