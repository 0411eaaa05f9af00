import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { percentile } from './percentile.ts';
import { openPool } from './database-pool.ts';
import { databaseWorkBetween, markDatabase, perTask, type WorkPerTask } from './database-work.ts';
import type { Gateway } from './gateway-process.ts';
import { cpuShareBetween, CONNECTIONS, LOAD_SECONDS, QUIET_PERCENT, QUIET_TIMEOUT_MS, WARMUP_SECONDS, type CpuShare } from './measure-load.ts';
import { snapshotCpu } from './process-cpu.ts';
import { waitForQuietMachine } from './quiet-machine.ts';
import type { TaskSteps } from './task-steps.ts';
import type { WorkflowCeilingCommand, WorkflowCeilingMessage } from './workflow-ceiling-protocol.ts';

/** Its own database on the gateway's cluster: the engine's tables and channels stay apart from the gateway's. */
const CEILING_DATABASE = 'bench_workflow_ceiling';
const OUTPUT_LIMIT_CHARS = 20_000;

export interface WorkflowCeilingResult {
  name: string;
  steps: TaskSteps;
  concurrency: number;
  completed: number;
  completedPerSecond: number;
  seconds: number;
  /** Start → result of each workflow, ms. */
  latency: { p50: number; p99: number };
  /** `server` is the child, whose closed loop is the load generator too; `bench` is this (idle) process. */
  cpu: CpuShare;
  busyBefore: number;
  work: WorkPerTask;
}

/**
 * The bare DBOS workflow (workflow-ceiling-worker.ts) with as many steps as the gateway's tasks recorded,
 * `CONNECTIONS` in flight at once (the gateway's load: 64 clients, 64 workers), same warm-up and load time.
 */
export async function benchmarkWorkflowCeiling(root: string, gateway: Gateway, steps: TaskSteps, log: (message: string) => void): Promise<WorkflowCeilingResult> {
  const child = fork(path.join(root, 'bench/submit/workflow-ceiling-worker.ts'), [], {
    cwd: root, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-OUTPUT_LIMIT_CHARS); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const pool = openPool(gateway.databaseUrl, 1);
  let isMeasured = false;
  try {
    const request: WorkflowCeilingCommand = {
      type: 'run', databaseUrl: withDatabase(gateway.databaseUrl, CEILING_DATABASE), steps: steps.steps,
      concurrency: CONNECTIONS, warmupSeconds: WARMUP_SECONDS, loadSeconds: LOAD_SECONDS,
    };
    log(`bare DBOS workflow (${stepsLabel(steps.steps)}): ${WARMUP_SECONDS} s warm-up, ${LOAD_SECONDS} s load, ${CONNECTIONS} in flight`);
    child.send(request);
    await nextMessage(child, 'warmed', () => output);
    const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
    const targets = { serverPid: child.pid!, clusterDir: gateway.clusterDir };
    const before = await markDatabase(pool);
    const cpuBefore = await snapshotCpu(targets);
    child.send({ type: 'measure' } satisfies WorkflowCeilingCommand);
    const { load } = await nextMessage(child, 'measured', () => output);
    isMeasured = true;
    const seconds = (load.finishedAt - load.startedAt) / 1000;
    const cpu = cpuShareBetween(cpuBefore, await snapshotCpu(targets), seconds);
    const work = await databaseWorkBetween(pool, before, await markDatabase(pool));
    const latencies = load.latencies.sort((left, right) => left - right);
    return {
      name: `ceiling (bare DBOS workflow, ${stepsLabel(steps.steps)})`, steps, concurrency: CONNECTIONS,
      completed: latencies.length, completedPerSecond: latencies.length / seconds, seconds,
      latency: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      cpu, busyBefore, work: perTask(work, latencies.length),
    };
  } finally {
    await pool.end();
    await stopChild(child, isMeasured);
  }
}

function nextMessage<T extends WorkflowCeilingMessage['type']>(child: ChildProcess, type: T, output: () => string): Promise<Extract<WorkflowCeilingMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: WorkflowCeilingMessage) => {
      if (message.type !== type) return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolve(message as Extract<WorkflowCeilingMessage, { type: T }>);
    };
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`the workflow ceiling exited (code ${code}) before '${type}':\n${output()}`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** After 'measured' the child shuts DBOS down and exits when told to; otherwise it is killed. */
async function stopChild(child: ChildProcess, isMeasured: boolean): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  if (isMeasured) child.send({ type: 'stop' } satisfies WorkflowCeilingCommand);
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

const stepsLabel = (count: number) => `${count} step${count === 1 ? '' : 's'}`;

function withDatabase(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
