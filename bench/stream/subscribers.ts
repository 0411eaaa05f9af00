import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { EVENT_KINDS, newLatencyByKind, newLatencyHistogram, newStreamStats, type FinishedMessage, type OpenedMessage, type StreamStats, type WorkerMessage, type WorkerSetup } from './subscriber-protocol.ts';

/** In-flight stream opens per client worker. */
const OPEN_CONCURRENCY = 64;

export interface SubscribersOptions {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  headers: Record<string, string>;
  paths: string[];
  workers: number;
}

export interface OpenSummary {
  opened: number;
  failed: number;
  statusCounts: Record<string, number>;
  /** From the first open sent to the last stream answered, in the slowest worker. */
  openMs: number;
}

export interface Subscribers {
  /** Every stream has answered (200 or not). */
  opened: Promise<OpenSummary>;
  /** Events committed from `startMs` on are measured; earlier ones are counted apart. */
  startWindow(startMs: number): void;
  /** Every stream has ended, or was stopped. */
  finished: Promise<Omit<FinishedMessage, 'type'>>;
  /** Closes every stream still open; `finished` then resolves. */
  stop(): void;
}

/**
 * Spreads the streams over `workers` worker threads, each with its own event loop and keep-alive agent,
 * so that parsing thousands of streams is not limited to the one core this thread would get.
 */
export function startSubscribers(options: SubscribersOptions): Subscribers {
  const { hostname, port } = new URL(options.origin);
  const shares = Array.from({ length: options.workers }, (_, index) => options.paths.filter((_path, position) => position % options.workers === index))
    .filter((paths) => paths.length > 0);
  const workers = shares.map((paths) => new Worker(new URL('./subscriber-worker.ts', import.meta.url), {
    workerData: { host: hostname, port: Number(port), headers: options.headers, paths, openConcurrency: OPEN_CONCURRENCY } satisfies WorkerSetup,
  }));
  const messages = workers.map((worker) => collectMessages(worker));
  return {
    opened: Promise.all(messages.map((message) => message.opened)).then(mergeOpened),
    startWindow: (startMs) => { for (const worker of workers) worker.postMessage({ type: 'window', startMs }); },
    finished: Promise.all(messages.map((message) => message.finished)).then(async (finished) => {
      await Promise.all(workers.map((worker) => worker.terminate()));
      return mergeFinished(finished);
    }),
    stop: () => { for (const worker of workers) worker.postMessage({ type: 'stop' }); },
  };
}

function collectMessages(worker: Worker): { opened: Promise<OpenedMessage>; finished: Promise<FinishedMessage> } {
  let resolveOpened!: (message: OpenedMessage) => void;
  let resolveFinished!: (message: FinishedMessage) => void;
  const opened = new Promise<OpenedMessage>((resolve) => { resolveOpened = resolve; });
  const finished = new Promise<FinishedMessage>((resolve) => { resolveFinished = resolve; });
  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'opened') resolveOpened(message);
    else resolveFinished(message);
  });
  const failed = once(worker, 'error').then(([error]) => { throw error; });
  // A worker that crashes rejects both, instead of leaving the run waiting forever.
  return { opened: Promise.race([opened, failed]), finished: Promise.race([finished, failed]) };
}

function mergeOpened(messages: OpenedMessage[]): OpenSummary {
  const statusCounts: Record<string, number> = {};
  for (const message of messages) addCounts(statusCounts, message.statusCounts);
  return {
    opened: sum(messages.map((message) => message.opened)),
    failed: sum(messages.map((message) => message.failed)),
    statusCounts,
    openMs: Math.max(...messages.map((message) => message.openMs)),
  };
}

function mergeFinished(messages: FinishedMessage[]): Omit<FinishedMessage, 'type'> {
  const latency = newLatencyHistogram();
  const latencyByKind = newLatencyByKind();
  const stats = newStreamStats();
  for (const { stats: part, latency: partLatency, latencyByKind: partByKind } of messages) {
    latency.add(partLatency);
    for (const kind of EVENT_KINDS) latencyByKind[kind].add(partByKind[kind]);
    stats.events += part.events;
    stats.eventsBeforeWindow += part.eventsBeforeWindow;
    stats.dataBytes += part.dataBytes;
    stats.lastReceivedMs = Math.max(stats.lastReceivedMs, part.lastReceivedMs);
    stats.completedStreams += part.completedStreams;
    stats.failedOpens += part.failedOpens;
    addCounts(stats.statusCounts, part.statusCounts);
    stats.errorEvents += part.errorEvents;
    stats.gaps += part.gaps;
    stats.connectionErrors += part.connectionErrors;
    stats.errorSample.push(...part.errorSample);
  }
  return { stats, latency, latencyByKind };
}

function addCounts(into: Record<string, number>, counts: Record<string, number>): void {
  for (const [key, count] of Object.entries(counts)) into[key] = (into[key] ?? 0) + count;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
