/**
 * Submit-path benchmark: the real gateway on a fresh embedded Postgres under 64 keep-alive clients, then a
 * one-INSERT Fastify ceiling on the same Postgres. Prints a Markdown table and appends it to bench/RESULTS.md.
 * Usage: npm run bench:submit [-- --no-record]   (see bench/RESULTS.md for what each number means)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { startChildServer } from './child-server.ts';
import { freePort } from './free-port.ts';
import { startGateway, type Gateway } from './gateway-process.ts';
import { runLoad, type LoadOptions, type LoadResult } from './load.ts';
import { cpuSecondsBetween, snapshotCpu, type CpuTargets } from './process-cpu.ts';
import { appendSection, formatSection, type ScenarioResult } from './report.ts';
import { pollUntilDrained, summarizeCompletions, waitUntilIdle } from './task-completions.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_PATH = path.join(ROOT, 'bench/RESULTS.md');
const CONNECTIONS = 64;
const WARMUP_SECONDS = 2;
const LOAD_SECONDS = 10;
const DRAIN_CAP_MS = 120_000;
const CEILING_READY_TIMEOUT_MS = 30_000;

async function main(argv: string[]): Promise<void> {
  const shouldRecord = !argv.includes('--no-record');
  const profileDir = process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench/submit/profiles') : undefined;
  log('starting the gateway on a fresh embedded Postgres');
  const gateway = await startGateway({ root: ROOT, profileDir });
  process.once('SIGINT', () => void gateway.stop().finally(() => process.exit(130)));
  let scenarios: ScenarioResult[];
  try {
    scenarios = [await benchmarkGateway(gateway), await benchmarkCeiling(gateway)];
  } finally {
    log('stopping the gateway and removing its data directory');
    await gateway.stop();
  }
  const section = formatSection({
    date: new Date(), commit: describeCommit(), connections: CONNECTIONS,
    warmupSeconds: WARMUP_SECONDS, durationSeconds: LOAD_SECONDS, settings: gateway.settings,
  }, scenarios);
  console.log(`\n${section}`);
  if (shouldRecord) await appendSection(RESULTS_PATH, section);
  if (profileDir) log(`gateway CPU profile written to ${profileDir}`);
}

async function benchmarkGateway(gateway: Gateway): Promise<ScenarioResult> {
  const pool = new pg.Pool({ connectionString: gateway.databaseUrl, max: 2 });
  try {
    const url = `${gateway.url}/api/v1/tasks`;
    log(`gateway: ${WARMUP_SECONDS} s warm-up`);
    await runLoad(loadOptions(url, 'warm-up', WARMUP_SECONDS));
    await waitUntilIdle(pool, DRAIN_CAP_MS);
    log(`gateway: ${LOAD_SECONDS} s load, then waiting for every task to complete`);
    const since = new Date();
    let isLoadDone = false;
    const measuring = measureLoad({ serverPid: gateway.pid, clusterDir: gateway.clusterDir }, loadOptions(url, 'bench', LOAD_SECONDS))
      .finally(() => { isLoadDone = true; });
    const polling = pollUntilDrained(pool, { since, isLoadDone: () => isLoadDone, capAfterLoadMs: DRAIN_CAP_MS });
    const { load, cpu } = await measuring;
    const { isDrained } = await polling;
    const completions = await summarizeCompletions(pool, since, load.finishedAt);
    return { name: 'gateway', load, cpu, completions: { ...completions, isDrained } };
  } finally {
    await pool.end();
  }
}

async function benchmarkCeiling(gateway: Gateway): Promise<ScenarioResult> {
  const port = await freePort();
  const server = await startChildServer({
    script: 'bench/submit/ceiling-server.ts',
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: gateway.databaseUrl, PORT: String(port), ...gateway.settings },
    port,
    readyTimeoutMs: CEILING_READY_TIMEOUT_MS,
  });
  try {
    const url = `${server.url}/ceiling`;
    log(`ceiling: ${WARMUP_SECONDS} s warm-up, ${LOAD_SECONDS} s load`);
    await runLoad(loadOptions(url, 'warm-up', WARMUP_SECONDS));
    const { load, cpu } = await measureLoad({ serverPid: server.pid, clusterDir: gateway.clusterDir }, loadOptions(url, 'ceiling', LOAD_SECONDS));
    return { name: 'ceiling (Fastify + 1 INSERT)', load, cpu };
  } finally {
    await server.stop();
  }
}

/** Runs the load and the CPU each side used meanwhile, in percent of one core. */
async function measureLoad(targets: CpuTargets, options: LoadOptions): Promise<{ load: LoadResult; cpu: ScenarioResult['cpu'] }> {
  const before = await snapshotCpu(targets);
  const load = await runLoad(options);
  const after = await snapshotCpu(targets);
  const percent = (seconds: number) => (100 * seconds) / ((load.finishedAt.getTime() - load.startedAt.getTime()) / 1000);
  return {
    load,
    cpu: {
      server: percent(cpuSecondsBetween(before.server, after.server)),
      postgres: percent(cpuSecondsBetween(before.postgres, after.postgres)),
      bench: percent(after.bench - before.bench),
    },
  };
}

function loadOptions(url: string, label: string, durationSeconds: number): LoadOptions {
  return { url, label, durationSeconds, connections: CONNECTIONS };
}

function describeCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const isDirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return isDirty ? `${commit}, src/ with uncommitted changes` : commit;
  } catch {
    return 'unknown';
  }
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
