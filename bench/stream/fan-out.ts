import type { RecordableHistogram } from 'node:perf_hooks';
import { logActivity, sampleActivityIfAsked } from '../submit/activity-sampler.ts';
import { freePort } from '../submit/free-port.ts';
import { startChildServer } from '../submit/child-server.ts';
import { openPool } from '../submit/database-pool.ts';
import type { Gateway } from '../submit/gateway-process.ts';
import { cpuShareBetween, type CpuShare } from '../submit/measure-load.ts';
import { snapshotCpu, type CpuTargets } from '../submit/process-cpu.ts';
import { waitForQuietMachine } from '../submit/quiet-machine.ts';
import { releaseTask, submitHeldTask, type GatewayApi } from './gateway-api.ts';
import { LONG_ANSWER_MODEL } from './long-answer-catalog.ts';
import { sampleRss } from './peak-rss.ts';
import { EVENT_KINDS, nowMs, type EventKind, type StreamStats } from './subscriber-protocol.ts';
import { startSubscribers, type OpenSummary } from './subscribers.ts';

const QUIET_PERCENT = 30;
const QUIET_TIMEOUT_MS = 20_000;
/** How long after the answers should have ended the streams may still run before they are cut. */
const OVERRUN_MS = 30_000;
const READY_TIMEOUT_MS = 30_000;

type Log = (message: string) => void;

export interface FanOutLevel {
  subscribers: number;
  tasks: number;
  answerWords: number;
  answerMs: number;
  /** The gateway's EVENT_PARTIAL_INTERVAL_MS: how often a task streaming an answer writes an LLM_PARTIAL. */
  partialIntervalMs: number;
  clientWorkers: number;
}

/** The event flow of one task (or broadcaster channel) over the window. */
export interface EventFlow {
  eventsPerChannel: number;
  intervalMs: number;
  /** Mean length of a frame's `data`, as the subscribers received it. */
  dataBytes: number;
}

type ProducedFlow = Omit<EventFlow, 'dataBytes'> & { expectedDeliveries: number };

export interface FanOutResult {
  subscribers: number;
  open: OpenSummary;
  stats: StreamStats;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** The partial deltas, the completion frames and the rest apart: which kind makes the tail. */
  latencyByKindMs: Record<EventKind, { count: number; p50: number; p99: number; max: number }>;
  /** Window start → last event received. */
  windowMs: number;
  deliveredPerSecond: number;
  /** Events written in the window × the subscribers of their task (or channel). */
  expectedDeliveries: number;
  flow: EventFlow;
  rss: { startMiB: number; peakMiB: number };
  cpu: CpuShare;
  busyBefore: number;
}

interface Streams {
  origin: string;
  /** The gateway's database, for the opt-in activity sampling (BENCH_SAMPLE_ACTIVITY=1). */
  databaseUrl?: string;
  headers: Record<string, string>;
  paths: string[];
  cpuTargets: CpuTargets;
  /** Makes the channels produce their events; the window starts just before. */
  produce(): Promise<void>;
  producedFlow(windowStartMs: number): Promise<ProducedFlow>;
}

/**
 * `level.tasks` tasks whose mock model (the large tier's, which allows 8,192 output tokens) answers
 * `answerWords` words over `answerMs`, each followed by an equal share of the subscribers. The tasks wait
 * before their first token (gateway-api.ts, submitHeldTask) and are released once every stream is open, so
 * the window measures live delivery only, not the replay of what came before.
 */
export async function measureGatewayFanOut(gateway: Gateway, api: GatewayApi, level: FanOutLevel, log: Log): Promise<FanOutResult> {
  const taskIds = await Promise.all(Array.from({ length: level.tasks }, (_, index) =>
    submitHeldTask(api, `fan-out ${level.subscribers}/${index}: tell me a long story`, {
      model_override: LONG_ANSWER_MODEL, mock_delay_ms: level.answerMs, mock_answer_words: level.answerWords,
    })));
  const paths = Array.from({ length: level.subscribers }, (_, index) => `/api/v1/stream/sse?workflow_id=${taskIds[index % level.tasks]}`);
  return measureFanOut(`gateway, ${level.subscribers} streams`, level, log, {
    origin: gateway.url, databaseUrl: gateway.databaseUrl, headers: api.headers, paths,
    cpuTargets: { serverPid: gateway.pid, clusterDir: gateway.clusterDir },
    produce: async () => { await Promise.all(taskIds.map((taskId) => releaseTask(api, taskId))); },
    producedFlow: (windowStartMs) => readProducedFlow(gateway, taskIds, paths, windowStartMs),
  });
}

/**
 * The bare broadcaster under the load the tasks offer when nothing slows them: per channel, one event per
 * partial interval for the answer's duration, with the `data` size the gateway's subscribers received on
 * average. (A loaded gateway writes fewer, larger partials, later: copying what it wrote would copy that.)
 */
export async function measureBroadcasterFanOut(root: string, gateway: Gateway, level: FanOutLevel, dataBytes: number, log: Log): Promise<FanOutResult> {
  const flow: EventFlow = { eventsPerChannel: Math.round(level.answerMs / level.partialIntervalMs), intervalMs: level.partialIntervalMs, dataBytes };
  const port = await freePort();
  const server = await startChildServer({
    script: 'bench/stream/broadcaster-server.ts', cwd: root, env: { PATH: process.env.PATH ?? '', PORT: String(port) }, port, readyTimeoutMs: READY_TIMEOUT_MS,
  });
  try {
    return await measureFanOut(`broadcaster, ${level.subscribers} streams`, level, log, {
      origin: server.url, headers: {},
      paths: Array.from({ length: level.subscribers }, (_, index) => `/stream?channel=${index % level.tasks}`),
      cpuTargets: { serverPid: server.pid, clusterDir: gateway.clusterDir },
      produce: async () => {
        const response = await fetch(`${server.url}/broadcast`, { method: 'POST', body: JSON.stringify({ channels: level.tasks, ...flow }) });
        if (response.status !== 202) throw new Error(`the broadcaster answered ${response.status}`);
      },
      producedFlow: async () => ({ eventsPerChannel: flow.eventsPerChannel, intervalMs: flow.intervalMs, expectedDeliveries: flow.eventsPerChannel * level.subscribers }),
    });
  } finally {
    await server.stop();
  }
}

async function measureFanOut(name: string, level: FanOutLevel, log: Log, streams: Streams): Promise<FanOutResult> {
  const rss = await sampleRss(streams.cpuTargets.serverPid);
  log(`${name}: opening the streams`);
  const openActivity = streams.databaseUrl ? await sampleActivityIfAsked(streams.databaseUrl) : undefined;
  const subscribers = startSubscribers({ origin: streams.origin, headers: streams.headers, paths: streams.paths, workers: level.clientWorkers });
  const open = await subscribers.opened;
  await logActivity(log, `while ${name} opened`, openActivity);
  log(`${name}: ${open.opened} open, ${open.failed} refused (${JSON.stringify(open.statusCounts)}) in ${(open.openMs / 1000).toFixed(1)} s`);
  const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
  const windowStartMs = Math.floor(nowMs());
  subscribers.startWindow(windowStartMs);
  const cpuBefore = await snapshotCpu(streams.cpuTargets);
  log(`${name}: events flowing for about ${(level.answerMs / 1000).toFixed(0)} s`);
  const windowActivity = streams.databaseUrl ? await sampleActivityIfAsked(streams.databaseUrl) : undefined;
  await streams.produce();
  const overrun = setTimeout(() => {
    log(`${name}: streams still open ${OVERRUN_MS / 1000} s after the answers should have ended; closing them`);
    subscribers.stop();
  }, level.answerMs + OVERRUN_MS);
  const { stats, latency, latencyByKind } = await subscribers.finished.finally(() => clearTimeout(overrun));
  await logActivity(log, `while ${name} delivered`, windowActivity);
  const windowMs = (stats.events > 0 ? stats.lastReceivedMs : nowMs()) - windowStartMs;
  const cpu = cpuShareBetween(cpuBefore, await snapshotCpu(streams.cpuTargets), windowMs / 1000);
  const { expectedDeliveries, ...flow } = await streams.producedFlow(windowStartMs);
  const ms = (histogram: RecordableHistogram, percent: number) => histogram.count > 0 ? histogram.percentile(percent) / 1000 : Number.NaN;
  const maxMs = (histogram: RecordableHistogram) => histogram.count > 0 ? histogram.max / 1000 : Number.NaN;
  return {
    subscribers: level.subscribers, open, stats,
    latencyMs: { p50: ms(latency, 50), p90: ms(latency, 90), p99: ms(latency, 99), max: maxMs(latency) },
    latencyByKindMs: Object.fromEntries(EVENT_KINDS.map((kind) => {
      const histogram = latencyByKind[kind];
      return [kind, { count: histogram.count, p50: ms(histogram, 50), p99: ms(histogram, 99), max: maxMs(histogram) }];
    })) as FanOutResult['latencyByKindMs'],
    windowMs, deliveredPerSecond: stats.events / (windowMs / 1000), expectedDeliveries,
    flow: { ...flow, dataBytes: stats.events > 0 ? Math.round(stats.dataBytes / stats.events) : 0 },
    rss: await rss.stop(), cpu, busyBefore,
  };
}

/**
 * What the tasks wrote inside the window, from the event log: events per task and their mean spacing
 * (STREAM_END, sent as `done` without a timestamp, is not counted, as the subscribers do not count it).
 */
async function readProducedFlow(gateway: Gateway, taskIds: string[], paths: string[], windowStartMs: number): Promise<ProducedFlow> {
  const pool = openPool(gateway.databaseUrl, 1);
  try {
    const { rows } = await pool.query<{ task_id: string; events: number; span_ms: number }>(`
      select task_id, count(*)::int as events, (extract(epoch from max(created_at) - min(created_at)) * 1000)::float8 as span_ms
      from task_events
      where task_id = any($1) and type <> 'STREAM_END' and created_at >= to_timestamp($2 / 1000.0)
      group by task_id`, [taskIds, windowStartMs]);
    const subscribersOf = (taskId: string) => paths.filter((path) => path.endsWith(taskId)).length;
    const events = rows.reduce((total, row) => total + row.events, 0);
    return {
      eventsPerChannel: Math.round(events / taskIds.length),
      intervalMs: rows.reduce((total, row) => total + row.span_ms / Math.max(1, row.events - 1), 0) / Math.max(1, rows.length),
      expectedDeliveries: rows.reduce((total, row) => total + row.events * subscribersOf(row.task_id), 0),
    };
  } finally {
    await pool.end();
  }
}
