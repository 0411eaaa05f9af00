/**
 * OpenAI-layer streaming benchmark: time to first token through `POST /v1/chat/completions` (`stream: true`)
 * on the real gateway, against the mock model's own time to first token, at 32 concurrent streams and at one. Prints a
 * Markdown section and appends it to bench/RESULTS.md.
 * Usage: npm run bench:openai [-- --no-record] [-- --api-key]   (MOCK_DELAY_MS in the environment overrides the 200 ms default)
 * `--api-key`: the gateway authenticates, and the client sends an API key, as in production: every request also looks
 * up its key and counts against the key's OpenAI-layer limits (raised far above the load, so that none refuses).
 */
import path from 'node:path';
import { describeCommit } from '../submit/describe-commit.ts';
import { openPool } from '../submit/database-pool.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { cpuShareBetween, QUIET_PERCENT, QUIET_TIMEOUT_MS } from '../submit/measure-load.ts';
import { snapshotCpu, type CpuTargets } from '../submit/process-cpu.ts';
import { waitForQuietMachine } from '../submit/quiet-machine.ts';
import { appendSection } from '../submit/report.ts';
import { createApiAccount } from '../stream/gateway-api.ts';
import type { ClosedLoopOptions, ClosedLoopRun } from './closed-loop.ts';
import { DEVELOPMENT_KEY, measureGatewayTtft } from './gateway-ttft.ts';
import { breakDownLatency } from './latency-breakdown.ts';
import { measureMockTtft } from './mock-ttft.ts';
import { formatSection, type ConcurrencyLevel, type OpenAiRun } from './report.ts';
import { summarizeTtft, type TtftSummary } from './summary.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_PATH = path.join(ROOT, 'bench/RESULTS.md');
/**
 * Concurrent streams and seconds of load: the 32-stream load the target is about, then one stream at a
 * time, whose TTFT is the gateway's floor without any queueing for CPU or connections.
 */
const LEVELS = [[32, 20], [1, 10]] as const;
const WARMUP_SECONDS = 3;
const MOCK_DELAY_MS = Number(process.env.MOCK_DELAY_MS ?? 200);
/** With `--api-key`: authentication on, and the key's limits (spec 8: streams, requests and tokens per minute) out of the way. */
const API_KEY_SETTINGS = { GATEWAY_SKIP_AUTH: '0', MAX_STREAMS_PER_KEY: '1000', OPENAI_REQUESTS_PER_MINUTE: '1000000', OPENAI_TOKENS_PER_MINUTE: '1000000000' };

type Measure = (options: ClosedLoopOptions) => Promise<ClosedLoopRun>;

async function main(argv: string[]): Promise<void> {
  const shouldRecord = !argv.includes('--no-record');
  const commit = describeCommit(ROOT);
  log(`starting the gateway on a fresh embedded Postgres (MOCK_DELAY_MS=${MOCK_DELAY_MS})`);
  const withApiKey = argv.includes('--api-key');
  const gateway = await startGateway({
    root: ROOT, profileDir: process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench/openai/profiles') : undefined,
    env: { MOCK_DELAY_MS: String(MOCK_DELAY_MS), ...(withApiKey ? API_KEY_SETTINGS : {}) },
  });
  process.once('SIGINT', () => void gateway.stop().finally(() => process.exit(130)));
  let run: OpenAiRun;
  try {
    run = await benchmark(gateway, commit, withApiKey ? await newApiKey(gateway.url) : DEVELOPMENT_KEY);
  } finally {
    log('stopping the gateway and removing its data directory');
    await gateway.stop();
  }
  const section = formatSection(run);
  console.log(`\n${section}`);
  if (shouldRecord) await appendSection(RESULTS_PATH, section);
}

/** A key of a newly registered account, as a new user would make one. */
async function newApiKey(gatewayUrl: string): Promise<string> {
  const account = await createApiAccount(gatewayUrl);
  account.agent.destroy();
  return account.apiKey;
}

async function benchmark(gateway: Gateway, commit: string, apiKey: string): Promise<OpenAiRun> {
  const levels: ConcurrencyLevel[] = [];
  for (const [concurrency, durationSeconds] of LEVELS) levels.push(await benchmarkLevel(gateway, concurrency, durationSeconds, apiKey));
  return { date: new Date(), commit, warmupSeconds: WARMUP_SECONDS, settings: gateway.settings, levels };
}

async function benchmarkLevel(gateway: Gateway, concurrency: number, durationSeconds: number, apiKey: string): Promise<ConcurrencyLevel> {
  const cpuTargets = { serverPid: gateway.pid, clusterDir: gateway.clusterDir };
  const load = { concurrency, durationSeconds };
  const gatewayLoad = await measureAfterWarmUp(`gateway, ${concurrency} streams`, load, (options) => measureGatewayTtft(gateway.url, apiKey, options), cpuTargets);
  const pool = openPool(gateway.databaseUrl, 2);
  const segments = await breakDownLatency(pool, gatewayLoad.run.requests).finally(() => pool.end());
  // The idle gateway and its Postgres stay up, so the mock runs on the same machine in the same state.
  const mockLoad = await measureAfterWarmUp(`mock, ${concurrency} streams`, load, (options) => measureMockTtft(ROOT, MOCK_DELAY_MS, options), cpuTargets);
  return {
    ...load,
    gateway: summarize('gateway', gatewayLoad.run),
    mock: summarize('mock', mockLoad.run),
    segments,
    cpu: gatewayLoad.cpu,
    busyBefore: { gateway: gatewayLoad.busyBefore, mock: mockLoad.busyBefore },
  };
}

/** Warm-up (JIT, connection pools, DBOS queue polling at its fastest), then a quiet machine, then the measured load. */
async function measureAfterWarmUp(name: string, load: { concurrency: number; durationSeconds: number }, measure: Measure, cpuTargets: CpuTargets) {
  log(`${name}: ${WARMUP_SECONDS} s warm-up`);
  await measure({ concurrency: load.concurrency, durationSeconds: WARMUP_SECONDS, label: 'warmup' });
  const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
  log(`${name}: ${load.durationSeconds} s load`);
  const before = await snapshotCpu(cpuTargets);
  // Each level's queries are its own: the breakdown finds a request's task by its query.
  const run = await measure({ ...load, label: `measured-${load.concurrency}` });
  const cpu = cpuShareBetween(before, await snapshotCpu(cpuTargets), (run.finishedAt.getTime() - run.startedAt.getTime()) / 1000);
  return { run, busyBefore, cpu };
}

function summarize(name: string, run: ClosedLoopRun): TtftSummary {
  const summary = summarizeTtft(run);
  if (summary.errors > 0) log(`${name}: ${summary.errors} of ${summary.requests} requests failed, e.g. ${summary.firstError}`);
  return summary;
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
