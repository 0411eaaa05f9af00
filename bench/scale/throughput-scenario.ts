import type pg from 'pg';
import { openPool } from '../submit/database-pool.ts';
import { databaseWorkBetween, markDatabase, perTask, type WorkPerTask } from '../submit/database-work.ts';
import { runLoad, type LoadResult } from '../submit/load.ts';
import { CONNECTIONS, QUIET_PERCENT, QUIET_TIMEOUT_MS } from '../submit/measure-load.ts';
import { waitForQuietMachine } from '../submit/quiet-machine.ts';
import { cpuSplitBetween, readCpu, type CpuReading, type CpuSplit, type CpuTargets } from './cpu-split.ts';
import { followRun, type RunSample } from './follow-run.ts';
import type { ScaleContext } from './scale-context.ts';
import { startGatewayOnly, startWorker, workerIds, type Worker } from './service-processes.ts';

const DRAIN_TIMEOUT_MS = 600_000;
/** The steady window runs from this share of the backlog completed to the next, every worker up: no start-up, no tail. */
const STEADY_FROM = 0.1;
const STEADY_TO = 0.9;

/** How many workers drain the backlog, and the settings this setup changes (beside the run's own). */
export interface ThroughputSetup {
  workers: number;
  settings: Record<string, string>;
}

export interface ThroughputResult extends ThroughputSetup {
  tasks: number;
  completed: number;
  /** Tasks that ended otherwise (failed, cancelled, timed out), or had not ended by the drain timeout. */
  notCompleted: number;
  /** The backlog's submission through the gateway-only process, before any worker ran. */
  submission: LoadResult;
  /** Completed tasks / (last completed_at − first started_at). */
  toLastCompletion: { seconds: number; perSecond: number };
  steady: SteadyWindow;
  /** Tasks each worker completed (by the engine's executor id), in worker order. */
  completedByWorker: number[];
  work: WorkPerTask;
  peakConnections: number;
  /** Percent of one core the machine used just before the workers started. */
  busyBefore: number;
}

export interface SteadyWindow {
  completedFrom: number;
  completedTo: number;
  seconds: number;
  perSecond: number;
  cpu: CpuSplit;
}

/**
 * Scenario 1 and 2: a backlog of `tasks` simple tasks (mock model, no delay) is submitted through a gateway-only
 * process while no worker runs; then `workerCount` workers start at once and drain it. Database work counts
 * from before the submission to the last completion, so it holds submission and execution.
 */
export async function benchmarkThroughput(context: ScaleContext, setup: ThroughputSetup, tasks: number): Promise<ThroughputResult> {
  const { log } = context;
  const workerCount = setup.workers;
  const databaseName = 'scale_throughput';
  const databaseUrl = await context.postgres.createDatabase(databaseName);
  const services = { root: context.root, databaseUrl, settings: { ...context.settings, ...setup.settings } };
  const gateway = await startGatewayOnly(services);
  const pool = openPool(databaseUrl, 2);
  let workers: Worker[] = [];
  try {
    const before = await markDatabase(pool);
    log(`${describeSetup(setup)}: submitting ${tasks} simple tasks through the gateway-only process`);
    const submission = await runLoad({
      url: `${gateway.url}/api/v1/tasks`, connections: CONNECTIONS, durationSeconds: 0, amount: tasks, label: 'scale', fields: { mode: 'simple' },
    });
    if (submission.succeeded !== tasks) throw new Error(`${submission.succeeded} of ${tasks} submissions succeeded: ${JSON.stringify(submission.statusCounts)}`);
    const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
    log(`${describeSetup(setup)}: starting the worker(s); the backlog drains`);
    workers = await Promise.all(workerIds(workerCount).map((id) => startWorker(services, id)));
    const targets = { gatewayPid: gateway.pid, workerPids: workers.map((worker) => worker.pid), clusterDir: context.postgres.clusterDir };
    const steady = trackSteadyWindow(targets, tasks);
    const samples = await followRun(pool, DRAIN_TIMEOUT_MS, steady.onSample);
    const work = await databaseWorkBetween(pool, before, await markDatabase(pool));
    const totals = await countOutcomes(pool);
    return {
      ...setup, tasks, ...totals, submission, busyBefore,
      steady: steady.window(),
      completedByWorker: await completedByExecutor(pool, workers),
      work: perTask(work, tasks),
      peakConnections: Math.max(...samples.map((sample) => sample.connections)),
    };
  } finally {
    for (const worker of workers) await worker.stop();
    await gateway.stop();
    await pool.end();
    await context.postgres.dropDatabase(databaseName);
  }
}

async function countOutcomes(pool: pg.Pool): Promise<Pick<ThroughputResult, 'completed' | 'notCompleted' | 'toLastCompletion'>> {
  const { rows: [row] } = await pool.query<{ completed: number; total: number; seconds: number }>(`
    select count(*) filter (where status = 'COMPLETED')::int as completed, count(*)::int as total,
           extract(epoch from max(completed_at) filter (where status = 'COMPLETED') - min(started_at))::float8 as seconds
    from tasks`);
  return {
    completed: row.completed, notCompleted: row.total - row.completed,
    toLastCompletion: { seconds: row.seconds, perSecond: row.completed / row.seconds },
  };
}

async function completedByExecutor(pool: pg.Pool, workers: Worker[]): Promise<number[]> {
  const { rows } = await pool.query<{ executor_id: string; count: number }>(`
    select executor_id, count(*)::int as count from dbos.workflow_status
    where name = 'agentgate.task' and status = 'SUCCESS' group by executor_id`);
  return workers.map((worker) => rows.find((row) => row.executor_id === worker.executorId)?.count ?? 0);
}

/**
 * The steady window runs between the first samples at which 10 % and 90 % of the backlog had completed (every
 * worker was up: they are started before the first sample). The CPU is read only at its two edges, so that
 * reading every process's /proc entries costs this process nothing in between.
 */
function trackSteadyWindow(targets: CpuTargets, tasks: number) {
  const edges: Array<{ completed: number; cpu: CpuReading }> = [];
  const thresholds = [STEADY_FROM * tasks, STEADY_TO * tasks];
  return {
    async onSample(sample: RunSample) {
      if (edges.length < 2 && sample.completed >= thresholds[edges.length]) edges.push({ completed: sample.completed, cpu: await readCpu(targets) });
    },
    window(): SteadyWindow {
      const [from, to] = edges;
      if (!to || to.completed === from.completed) throw new Error('too few samples for a steady window: raise --tasks');
      const seconds = (to.cpu.atMs - from.cpu.atMs) / 1000;
      return {
        completedFrom: from.completed, completedTo: to.completed, seconds,
        perSecond: (to.completed - from.completed) / seconds, cpu: cpuSplitBetween(from.cpu, to.cpu),
      };
    },
  };
}

export function describeSetup(setup: ThroughputSetup): string {
  const settings = Object.entries(setup.settings).map(([name, value]) => `${name}=${value}`);
  return `${setup.workers} worker${setup.workers === 1 ? '' : 's'}${settings.length > 0 ? `, ${settings.join(', ')}` : ''}`;
}
