/**
 * Concurrent streaming tasks per process and RSS per task (issue 30, Scope 6): one gateway (`--role all`) on a
 * fresh embedded Postgres with WORKER_CONCURRENCY above the load and TENANT_WORKER_SHARE=1, `tasks` simple tasks
 * whose mock answer streams over `delayMs`, submitted by 64 clients at once. The gateway's RSS is sampled every
 * 100 ms; RUNNING tasks are counted every second. Records nothing; bench/RESULTS.md holds the runs by hand.
 * Usage: node bench/concurrency/run.ts [tasks=1000] [delayMs=30000]
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPool } from '../submit/database-pool.ts';
import { startGateway } from '../submit/gateway-process.ts';
import { runLoad } from '../submit/load.ts';
import { machineLine } from '../submit/report.ts';
import { sampleRss } from '../stream/peak-rss.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CONNECTIONS = 64;
const DRAIN_CAP_MS = 600_000;

async function main(argv: string[]): Promise<void> {
  const tasks = Number(argv[0] ?? 1_000);
  const delayMs = Number(argv[1] ?? 30_000);
  const settings = { WORKER_CONCURRENCY: String(tasks + 100), TENANT_WORKER_SHARE: '1', WORKER_MEMORY_LIMIT_MB: '100000' };
  const gateway = await startGateway({ root: ROOT, profileDir: undefined, env: settings });
  const pool = openPool(gateway.databaseUrl, 1);
  try {
    // One warm task first, so the baseline includes the code a task loads.
    await runLoad({ url: `${gateway.url}/api/v1/tasks`, connections: 1, durationSeconds: 0, amount: 1, label: 'warm', fields: { mode: 'simple' } });
    await waitForRunning(pool, (running, unfinished) => unfinished === 0, DRAIN_CAP_MS);
    await sleep(1_000);
    const rss = await sampleRss(gateway.pid);
    const startedMs = Date.now();
    const load = await runLoad({
      url: `${gateway.url}/api/v1/tasks`, connections: CONNECTIONS, durationSeconds: 0, amount: tasks, label: 'concurrency',
      fields: { mode: 'simple', context: { mock_delay_ms: delayMs } },
    });
    let peakRunning = 0;
    await waitForRunning(pool, (running, unfinished) => {
      peakRunning = Math.max(peakRunning, running);
      return unfinished === 0;
    }, DRAIN_CAP_MS);
    const wallMs = Date.now() - startedMs;
    const { startMiB, peakMiB } = await rss.stop();
    const { rows: [counts] } = await pool.query<{ completed: number; failed: number }>(`
      select count(*) filter (where status = 'COMPLETED')::int as completed, count(*) filter (where status <> 'COMPLETED')::int as failed
      from tasks where query like 'concurrency%'`);
    console.log(machineLine());
    console.log('| tasks | answer streams over s | submitted in s (non-2xx) | peak RUNNING at once | completed (not) | wall s | RSS before → peak MiB | RSS per running task MiB |');
    console.log(`| ${tasks} | ${delayMs / 1000} | ${((load.finishedAt.getTime() - load.startedAt.getTime()) / 1000).toFixed(1)} (${load.non2xx}) | ${peakRunning} | `
      + `${counts.completed} (${counts.failed}) | ${(wallMs / 1000).toFixed(1)} | ${startMiB.toFixed(0)} → ${peakMiB.toFixed(0)} | ${((peakMiB - startMiB) / Math.max(1, peakRunning)).toFixed(3)} |`);
  } finally {
    await pool.end();
    await gateway.stop();
  }
}

/** Polls every second until `isDone(running, unfinished)`. */
async function waitForRunning(pool: ReturnType<typeof openPool>, isDone: (running: number, unfinished: number) => boolean, capMs: number): Promise<void> {
  const deadline = Date.now() + capMs;
  while (Date.now() < deadline) {
    const { rows: [row] } = await pool.query<{ running: number; unfinished: number }>(`
      select count(*) filter (where status = 'RUNNING')::int as running,
             count(*) filter (where status not in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'))::int as unfinished from tasks`);
    if (isDone(row.running, row.unfinished)) return;
    await sleep(1_000);
  }
  throw new Error('tasks did not finish in time');
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
