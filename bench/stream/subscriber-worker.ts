/**
 * One client worker thread of the fan-out benchmark (subscribers.ts starts several): opens its share of the
 * SSE streams on one keep-alive agent, parses them with eventsource-parser, and records each event's
 * commit → receipt latency. It posts `opened` once every stream has answered, and `finished` (its stats,
 * with a transferable histogram) once every stream has ended or the parent says stop.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  eventKind, newLatencyByKind, newLatencyHistogram, newStreamStats, nowMs, type FinishedMessage, type OpenedMessage, type ParentMessage, type WorkerSetup,
} from './subscriber-protocol.ts';

const ERROR_SAMPLE = 5;
const setup = workerData as WorkerSetup;
const port = parentPort!;
const stats = newStreamStats();
const latency = newLatencyHistogram();
const latencyByKind = newLatencyByKind();
const agent = new http.Agent({ keepAlive: true, maxSockets: setup.paths.length + 1 });
const requests = new Set<http.ClientRequest>();
let windowStartMs = Number.POSITIVE_INFINITY;
let open = 0;
let ended = 0;
let isStopping = false;
let isOpenPhaseDone = false;

port.on('message', (message: ParentMessage) => {
  if (message.type === 'window') windowStartMs = message.startMs;
  if (message.type === 'stop') stop();
});

void openAll();

/** At most `openConcurrency` opens in flight at once: a client herd of thousands would time itself out. */
async function openAll(): Promise<void> {
  const startedMs = nowMs();
  let next = 0;
  const opener = async () => {
    while (next < setup.paths.length && !isStopping) await openStream(setup.paths[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(setup.openConcurrency, setup.paths.length) }, opener));
  port.postMessage({
    type: 'opened', opened: open, failed: stats.failedOpens, statusCounts: stats.statusCounts, openMs: nowMs() - startedMs,
  } satisfies OpenedMessage);
  isOpenPhaseDone = true;
  finishIfDone();
}

/** Resolves once the stream has answered (or failed to); the stream then runs on its own. */
function openStream(path: string): Promise<void> {
  return new Promise((resolve) => {
    const request = http.get({ agent, host: setup.host, port: setup.port, path, headers: setup.headers });
    requests.add(request);
    let isSettled = false;
    const settle = (isOpen: boolean) => {
      if (isSettled) return;
      isSettled = true;
      requests.delete(request);
      ended += 1;
      if (!isOpen) resolve();
      finishIfDone();
    };
    request.once('error', (error) => {
      stats.connectionErrors += 1;
      if (stats.errorSample.length < ERROR_SAMPLE) stats.errorSample.push(error.message);
      settle(false);
    });
    request.once('response', (response) => {
      const status = String(response.statusCode);
      stats.statusCounts[status] = (stats.statusCounts[status] ?? 0) + 1;
      if (response.statusCode !== 200) {
        stats.failedOpens += 1;
        response.resume();
        response.once('end', () => settle(false));
        return;
      }
      open += 1;
      resolve();
      const follow = followStream();
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => follow.feed(chunk));
      response.once('close', () => settle(true));
    });
  });
}

function followStream() {
  let lastSeq = 0;
  return createParser({
    onEvent(event: EventSourceMessage) {
      const receivedMs = nowMs();
      if (event.event === 'done') {
        stats.completedStreams += 1;
        return;
      }
      if (event.event === 'error') stats.errorEvents += 1;
      const data = JSON.parse(event.data) as { seq?: number; timestamp?: string };
      if (typeof data.seq === 'number') {
        if (lastSeq !== 0 && data.seq !== lastSeq + 1) stats.gaps += 1;
        lastSeq = data.seq;
      }
      if (typeof data.timestamp !== 'string') return;
      const committedMs = Date.parse(data.timestamp);
      if (committedMs < windowStartMs) {
        stats.eventsBeforeWindow += 1;
        return;
      }
      stats.events += 1;
      stats.dataBytes += event.data.length;
      stats.lastReceivedMs = Math.max(stats.lastReceivedMs, receivedMs);
      const microseconds = Math.max(1, Math.round((receivedMs - committedMs) * 1000));
      latency.record(microseconds);
      latencyByKind[eventKind(event.event)].record(microseconds);
    },
  });
}

function stop(): void {
  isStopping = true;
  for (const request of requests) request.destroy();
  finishIfDone();
}

let isFinished = false;
function finishIfDone(): void {
  if (isFinished || !isOpenPhaseDone || (ended < setup.paths.length && !(isStopping && requests.size === 0))) return;
  isFinished = true;
  agent.destroy();
  port.postMessage({ type: 'finished', stats, latency, latencyByKind } satisfies FinishedMessage);
}
