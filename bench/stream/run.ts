/**
 * Task event streams over SSE: (a) fan-out to 1,000 and 5,000 subscribers of running tasks, beside a bare
 * `node:http` broadcaster; (b) a reconnecting client catching up 10,000 events; (c) submit → first event.
 * Prints a Markdown section and appends it to bench/RESULTS.md.
 * Usage: npm run bench:stream [-- --no-record] [-- --quick]
 * Environment: BENCH_CLIENT_WORKERS (client threads, default 2); diagnostics as in bench/submit:
 * BENCH_SAMPLE_ACTIVITY=1 prints what Postgres's backends wait on while streams open and while events flow,
 * BENCH_CPU_PROF=1 writes gateway CPU profiles to bench/stream/profiles/.
 */
import http from 'node:http';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { appendSection } from '../submit/report.ts';
import { measureCatchUp, writeLongLog } from './catch-up.ts';
import { measureBroadcasterFanOut, measureGatewayFanOut, type FanOutLevel } from './fan-out.ts';
import { measureFirstEvents } from './first-event.ts';
import { createApiAccount } from './gateway-api.ts';
import { LONG_ANSWER_MODEL, writeLongAnswerCatalog } from './long-answer-catalog.ts';
import { formatSection, type FanOutPair, type StreamRun } from './report.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_PATH = path.join(ROOT, 'bench/RESULTS.md');

/**
 * Authentication by API key, as production clients stream; the per-key stream cap and rate limit raised so
 * that one key may hold every subscriber of the run (each stream open is a request).
 */
const GATEWAY_SETTINGS = { GATEWAY_SKIP_AUTH: '0', MAX_STREAMS_PER_KEY: '10000', RATE_LIMIT_PER_MINUTE: '1000000' };
/** Only while the long log of (b) is written: about one LLM_PARTIAL per word instead of one per 50 ms. */
const LONG_LOG_INTERVAL = { EVENT_PARTIAL_INTERVAL_MS: '1' };

/** BENCH_CPU_PROF=1: `--cpu-prof` profiles of the gateway (one per start) go here. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench/stream/profiles') : undefined;
const CLIENT_WORKERS = Number(process.env.BENCH_CLIENT_WORKERS ?? 2);
/** The gateway's default, which the fan-out runs with. */
const PARTIAL_INTERVAL_MS = loadConfig({}).events.partialIntervalMs;

interface Plan {
  levels: FanOutLevel[];
  catchUp: { events: number; words: number; delayMs: number; runs: number };
  firstEvents: { sequential: number; clients: number; perClient: number };
}

const FULL: Plan = {
  levels: [1_000, 5_000].map((subscribers) => ({
    subscribers, tasks: 10, answerWords: 4_000, answerMs: 15_000, partialIntervalMs: PARTIAL_INTERVAL_MS, clientWorkers: CLIENT_WORKERS,
  })),
  catchUp: { events: 10_000, words: 12_500, delayMs: 31_250, runs: 5 },
  firstEvents: { sequential: 80, clients: 8, perClient: 8 },
};

const QUICK: Plan = {
  levels: [100, 500].map((subscribers) => ({
    subscribers, tasks: 4, answerWords: 1_000, answerMs: 4_000, partialIntervalMs: PARTIAL_INTERVAL_MS, clientWorkers: CLIENT_WORKERS,
  })),
  catchUp: { events: 2_000, words: 2_500, delayMs: 6_250, runs: 3 },
  firstEvents: { sequential: 15, clients: 4, perClient: 4 },
};

async function main(argv: string[]): Promise<void> {
  const shouldRecord = !argv.includes('--no-record');
  const isQuick = argv.includes('--quick');
  const plan = isQuick ? QUICK : FULL;
  const commit = describeCommit(ROOT);
  const catalog = await writeLongAnswerCatalog(ROOT, plan.catchUp.words + 1_000);
  const longLogSettings = { ...GATEWAY_SETTINGS, ...LONG_LOG_INTERVAL, MODELS_CONFIG: catalog.path };
  log('starting the gateway on a fresh embedded Postgres, partial events every 1 ms for the long log');
  let gateway = await startGateway({ root: ROOT, profileDir: PROFILE_DIR, env: longLogSettings }).catch(async (error: unknown) => {
    await catalog.remove();
    throw error;
  });
  process.once('SIGINT', () => void gateway.stop().finally(() => process.exit(130)));
  let run: StreamRun;
  try {
    run = await benchmark(gateway, plan, commit, isQuick, (restarted) => { gateway = restarted; });
  } finally {
    log('stopping the gateway and removing its data directory');
    await gateway.stop();
    await catalog.remove();
  }
  const section = formatSection(run);
  console.log(`\n${section}`);
  if (shouldRecord) await appendSection(RESULTS_PATH, section);
}

async function benchmark(started: Gateway, plan: Plan, commit: string, isQuick: boolean, onRestart: (gateway: Gateway) => void): Promise<StreamRun> {
  let api = await createApiAccount(started.url);
  const { catchUp } = plan;
  log(`(b) writing a task log of at least ${catchUp.events} events`);
  const longLog = await writeLongLog(started, api, catchUp.words, catchUp.delayMs, catchUp.events);
  log(`(b) ${longLog.events} events written in ${(longLog.writtenInMs / 1000).toFixed(1)} s; restarting the gateway with default event settings`);
  api.agent.destroy();
  const gateway = await started.restart(GATEWAY_SETTINGS);
  onRestart(gateway);
  api = { ...api, agent: new http.Agent({ keepAlive: true }) };
  const catchUpResult = await measureCatchUp(api, longLog, catchUp.events, catchUp.runs);
  log(`(b) catch-up runs: ${catchUpResult.runsMs.map((ms) => ms.toFixed(0)).join(', ')} ms`);

  log('(c) submit → first event');
  await measureFirstEvents(api, 1, 5, 'warm-up');
  const firstEvents = [
    await measureFirstEvents(api, 1, plan.firstEvents.sequential, 'sequential'),
    await measureFirstEvents(api, plan.firstEvents.clients, plan.firstEvents.perClient, 'concurrent'),
  ];

  const fanOut: FanOutPair[] = [];
  for (const level of plan.levels) {
    log(`(a) fan-out to ${level.subscribers} streams`);
    const gatewayResult = await measureGatewayFanOut(gateway, api, level, log);
    const broadcaster = await measureBroadcasterFanOut(ROOT, gateway, level, gatewayResult.flow.dataBytes, log);
    fanOut.push({ level, gateway: gatewayResult, broadcaster });
  }
  return {
    date: new Date(), commit, isQuick, settings: GATEWAY_SETTINGS,
    catchUpSettings: { ...LONG_LOG_INTERVAL, MODELS_CONFIG: `a copy of config/models.yaml with ${LONG_ANSWER_MODEL}'s max_output_tokens at ${catchUp.words + 1_000}` },
    fanOut, catchUp: catchUpResult, firstEvents,
  };
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
