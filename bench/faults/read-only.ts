/**
 * Issue 26's full-size read-only scenario, too slow for the test suite: a gateway-only process and two workers on a
 * Postgres of the script's own, 20 five-agent DAG tasks (mock model), then the database read-only with its
 * sessions cut for 5 s and for 40 s (each on fresh processes and a fresh Postgres), undone as a failover back
 * would (writable, sessions cut again). Prints one Markdown table row per window for bench/RESULTS.md.
 *
 *   node bench/faults/read-only.ts [--windows 5,40] [--tasks 20]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startGateway, type Gateway } from '../../test/helpers/gateway.ts';
import { startOwnPostgres } from '../../test/helpers/own-postgres.ts';
import {
  adminSession, assertDagTasksCompletedOnce, setReadOnly, submitDagTasks, waitForAllEnded, waitUntilAgentsRun,
} from '../../test/helpers/write-faults.ts';

const DEAD_AFTER_SECONDS = 30;

interface WindowResult {
  windowSeconds: number;
  readinessMs: number[];
  submissions: string[];
  lastCompletedAfterMs: number | string;
  exactlyOnce: string;
  exited: string[];
  /** An exited process's last error or fatal log lines: why it ended. */
  exitReasons: string[];
}

const lastWords = (output: string) => output.split('\n').filter((line) => /"level":(50|60)/.test(line)).slice(-3).join('\n') || output.split('\n').slice(-5).join('\n');

async function runWindow(windowSeconds: number, taskCount: number): Promise<WindowResult> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = { after: (fn: () => Promise<void> | void) => { cleanups.push(fn); } };
  try {
    const postgres = await startOwnPostgres(cleanup);
    // Three processes at the default pools (20 + 20 each) would outgrow the server's 100 connections.
    const env = { EXECUTOR_DEAD_AFTER_SECONDS: String(DEAD_AFTER_SECONDS), DB_CONNECT_TIMEOUT_MS: '1000', DB_POOL_SIZE: '10', ENGINE_DB_POOL_SIZE: '10' };
    const gateway = await startGateway(cleanup, { databaseUrl: postgres.url, env, args: ['--role', 'gateway'] });
    const workers = [
      await startGateway(cleanup, { databaseUrl: postgres.url, env: { ...env, EXECUTOR_ID: 'worker-a' }, args: ['--role', 'worker'] }),
      await startGateway(cleanup, { databaseUrl: postgres.url, env: { ...env, EXECUTOR_ID: 'worker-b' }, args: ['--role', 'worker'] }),
    ];
    const processes = [gateway, ...workers];
    const admin = await adminSession(cleanup, postgres.url);
    const taskIds = await submitDagTasks(gateway, taskCount, 2_000);
    await waitUntilAgentsRun(gateway, taskIds, Math.ceil(taskCount / 2));

    await setReadOnly(admin, true);
    const readOnlyAt = Date.now();
    const readiness = processes.map((process) => timeToNotReady(process, readOnlyAt));
    const submissions: string[] = [];
    while (Date.now() - readOnlyAt < windowSeconds * 1000) {
      const answer = await gateway.request('POST', '/api/v1/tasks', { query: 'during the window' }).catch((error: Error) => ({ status: 0, headers: new Headers(), text: error.message }));
      submissions.push(`${answer.status}${answer.headers.get('retry-after') ? ' (Retry-After)' : ''}`);
      await sleep(2_000);
    }
    await setReadOnly(admin, false);
    const writableAt = Date.now();
    let lastCompletedAfterMs: number | string;
    try {
      await waitForAllEnded(gateway, taskIds, (DEAD_AFTER_SECONDS + 60) * 1000);
      const { rows: [last] } = await gateway.sql.query(`select (extract(epoch from max(completed_at)) * 1000)::bigint as at from tasks where id = any($1)`, [taskIds]);
      lastCompletedAfterMs = Number(last.at) - writableAt;
    } catch (error) {
      lastCompletedAfterMs = `not all within ${DEAD_AFTER_SECONDS + 60} s: ${(error as Error).message}`;
    }
    const exactlyOnce = await assertDagTasksCompletedOnce(gateway, taskIds).then(() => 'yes', (error: Error) => `no: ${error.message.split('\n')[0]}`);
    const names = ['gateway', 'worker-a', 'worker-b'];
    return {
      windowSeconds, readinessMs: await Promise.all(readiness), submissions, lastCompletedAfterMs, exactlyOnce,
      exited: processes.flatMap((process, index) => (process.isRunning() ? [] : [names[index]])),
      exitReasons: processes.flatMap((process, index) => (process.isRunning() ? [] : [`${names[index]}: ${lastWords(process.output())}`])),
    };
  } finally {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => {});
  }
}

/** Milliseconds from `since` to the process's first 503 from /readiness (polled every 100 ms, for up to 10 s). */
async function timeToNotReady(process: Gateway, since: number): Promise<number> {
  while (Date.now() - since < 10_000) {
    const answer = await process.request('GET', '/readiness').catch(() => undefined);
    if (answer?.status === 503) return Date.now() - since;
    await sleep(100);
  }
  return Number.POSITIVE_INFINITY;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { windows: { type: 'string', default: '5,40' }, tasks: { type: 'string', default: '20' } } });
  console.log('| read-only for | readiness 503 after (gateway / worker-a / worker-b) | submissions during the window | last task completed after writable | exactly once | processes that exited |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const windowSeconds of values.windows.split(',').map(Number)) {
    const result = await runWindow(windowSeconds, Number(values.tasks));
    const completed = typeof result.lastCompletedAfterMs === 'number' ? `+${(result.lastCompletedAfterMs / 1000).toFixed(1)} s` : result.lastCompletedAfterMs;
    for (const reason of result.exitReasons) console.error(`${windowSeconds} s window, exited: ${reason}`);
    console.log(`| ${windowSeconds} s | ${result.readinessMs.map((ms) => `${ms} ms`).join(' / ')} | ${result.submissions.join(', ')} | ${completed} | ${result.exactlyOnce} | ${result.exited.length === 0 ? 'none' : result.exited.join(', ')} |`);
  }
}

await main();
