/**
 * Deep research benchmark (issue 27): `deep` research tasks, one at a time, over the offline fixture corpus, with the
 * mock model answering every call after MOCK_LATENCY_MS = 200 ms (tool-call turns and structured answers included,
 * as a provider's time to first token; the answer then streams at once). Tools are local (fixture search, fixture
 * pages). The coverage evaluation is scripted to find gaps once (`mock_coverage`), so a task runs every phase of
 * the strategy: refinement, agents, synthesis, two coverage rounds with one round of gap filling, verification.
 * Per task: wall time, model and tool calls, write transactions per phase, and the gateway's share of the wall time
 * (wall time minus the model and tool waits on the critical path: task-timeline.ts). Prints a Markdown section and
 * appends it to bench/RESULTS.md.
 * Usage: npm run bench:research [-- --no-record] [--runs N] [--profile <dir>]
 */
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { openPool } from '../submit/database-pool.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { snapshotCpu } from '../submit/process-cpu.ts';
import { appendSection } from '../submit/report.ts';
import { formatSection, type MeasuredRun } from './report.ts';
import { readTaskTimeline } from './task-timeline.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MODEL_LATENCY_MS = 200;
const WARMUP_TASKS = 2;
const SESSION_ID = 'bench-research';
const QUESTION = 'Which renewable sources give electricity day and night, and since when have they been used?';
const TASK_CONTEXT = { force_research: true, research_strategy: 'deep', mock_coverage: ['gaps', 'complete'] };
/** How long the idle gateway is watched for the transactions it takes by itself (leases, sweeps). */
const IDLE_WINDOW_MS = 10_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, profile: { type: 'string' }, 'no-record': { type: 'boolean', default: false } } });
  const commit = describeCommit(ROOT);
  const loadBefore = os.loadavg();
  log('starting the gateway on a fresh embedded Postgres');
  const gateway = await startGateway({
    root: ROOT, profileDir: values.profile,
    env: { MOCK_LATENCY_MS: String(MODEL_LATENCY_MS), MOCK_DELAY_MS: '0', WEB_SEARCH_PROVIDER: 'fixture' },
  });
  const pool = openPool(gateway.databaseUrl, 2);
  let runs: MeasuredRun[];
  let idleXidsPerSecond: number;
  try {
    for (let index = 0; index < WARMUP_TASKS; index++) await runTask(gateway, pool);
    await waitForSessionTitle(pool);
    idleXidsPerSecond = await idleTransactionRate(pool);
    runs = [];
    for (let index = 0; index < Number(values.runs); index++) {
      log(`task ${index + 1} of ${values.runs}`);
      runs.push(await measureTask(gateway, pool));
    }
  } finally {
    await pool.end();
    await gateway.stop();
  }
  const section = formatSection({ commit, modelLatencyMs: MODEL_LATENCY_MS, loadBefore, loadAfter: os.loadavg(), idleXidsPerSecond, runs });
  console.log(`\n${section}`);
  if (!values['no-record']) await appendSection(path.join(ROOT, 'bench/RESULTS.md'), section);
}

async function measureTask(gateway: Gateway, pool: pg.Pool): Promise<MeasuredRun> {
  const cpuTargets = { serverPid: gateway.pid, clusterDir: gateway.clusterDir };
  const cpuBefore = await snapshotCpu(cpuTargets);
  const xidBefore = await nextTransactionId(pool);
  const taskId = await runTask(gateway, pool);
  const xidAfter = await nextTransactionId(pool);
  const cpuAfter = await snapshotCpu(cpuTargets);
  const timeline = await readTaskTimeline(pool, { taskId, modelLatencyMs: MODEL_LATENCY_MS, xidBefore, xidAfter });
  return {
    ...timeline,
    gatewayCpuMs: (cpuAfter.server - cpuBefore.server) * 1000,
    postgresCpuMs: (cpuAfter.postgres - cpuBefore.postgres) * 1000,
  };
}

/** Submits the research task and returns its id once its workflow has ended (its last step recorded). */
async function runTask(gateway: Gateway, pool: pg.Pool): Promise<string> {
  const response = await fetch(`${gateway.url}/api/v1/tasks`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: QUESTION, session_id: SESSION_ID, context: TASK_CONTEXT }),
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  const { task_id: taskId } = await response.json() as { task_id: string };
  for (;;) {
    const { rows: [row] } = await pool.query<{ status: string; error: string | null; workflow: string | null }>(`
      select t.status, t.error, w.status as workflow from tasks t left join dbos.workflow_status w on w.workflow_uuid = t.id::text where t.id = $1`, [taskId]);
    if (['FAILED', 'CANCELLED', 'TIMEOUT'].includes(row.status)) throw new Error(`task ${taskId} ended ${row.status}: ${row.error}`);
    if (row.status === 'COMPLETED' && row.workflow === 'SUCCESS') return taskId;
    await sleep(20);
  }
}

/** The session's title is written by a model call after its first task: let it finish before anything is measured. */
async function waitForSessionTitle(pool: pg.Pool): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const { rows } = await pool.query(`select 1 from sessions where external_id = $1 and title is not null`, [SESSION_ID]);
    if (rows.length > 0) return;
    await sleep(100);
  }
  throw new Error('the session was never titled');
}

/** Transaction ids the idle gateway takes per second (executor leases, sweeps): the background under each task. */
async function idleTransactionRate(pool: pg.Pool): Promise<number> {
  const before = await nextTransactionId(pool);
  await sleep(IDLE_WINDOW_MS);
  return Number(await nextTransactionId(pool) - before) / (IDLE_WINDOW_MS / 1000);
}

/** The id the next write transaction will take; reading it takes none. */
async function nextTransactionId(pool: pg.Pool): Promise<bigint> {
  const { rows } = await pool.query<{ xid: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as xid');
  return BigInt(rows[0].xid);
}

const log = (message: string) => console.error(`[bench] ${message}`);

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
