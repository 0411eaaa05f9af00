import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPool } from '../submit/database-pool.ts';
import type { Gateway } from '../submit/gateway-process.ts';
import { submitTask, taskStatus, type GatewayApi } from './gateway-api.ts';
import { LONG_ANSWER_MODEL } from './long-answer-catalog.ts';
import { readSse, requestJson } from './sse-client.ts';
import { nowMs } from './subscriber-protocol.ts';

const COMPLETION_TIMEOUT_MS = 180_000;
const POLL_INTERVAL_MS = 500;
/** The reconnecting client had received this many events before it lost its connection. */
const EVENTS_BEFORE_RECONNECT = 5;

export interface LongLog {
  taskId: string;
  events: number;
  /** From submission to the task's completion. */
  writtenInMs: number;
}

export interface CatchUpResult {
  log: LongLog;
  /** The `Last-Event-ID` the client reconnected with (a stream id), and the seq it stands for. */
  lastEventId: string;
  events: number;
  runsMs: number[];
}

/**
 * A task whose log holds at least `minimumEvents` events: one long mock answer, written while the gateway
 * runs with EVENT_PARTIAL_INTERVAL_MS=1 (about every word becomes its own LLM_PARTIAL event) and a catalog
 * that lets the mock answer that long (long-answer-catalog.ts).
 */
export async function writeLongLog(gateway: Gateway, api: GatewayApi, words: number, delayMs: number, minimumEvents: number): Promise<LongLog> {
  const startedMs = nowMs();
  const taskId = await submitTask(api, 'catch-up: a very long answer', {
    model_override: LONG_ANSWER_MODEL, mock_answer_words: words, mock_delay_ms: delayMs, max_output_tokens: words + 1_000,
  });
  const deadline = Date.now() + COMPLETION_TIMEOUT_MS;
  for (let status = ''; status !== 'TASK_STATUS_COMPLETED'; status = await taskStatus(api, taskId)) {
    if (/FAILED|CANCELLED|TIMEOUT/.test(status) || Date.now() > deadline) throw new Error(`the long-log task ended ${status || 'unfinished'}`);
    await sleep(POLL_INTERVAL_MS);
  }
  const writtenInMs = nowMs() - startedMs;
  const pool = openPool(gateway.databaseUrl, 1);
  const { rows: [{ events }] } = await pool.query<{ events: number }>('select count(*)::int as events from task_events where task_id = $1', [taskId])
    .finally(() => pool.end());
  if (events < minimumEvents + EVENTS_BEFORE_RECONNECT) {
    throw new Error(`the long-log task wrote ${events} events, fewer than the ${minimumEvents + EVENTS_BEFORE_RECONNECT} needed; raise its words or delay`);
  }
  return { taskId, events, writtenInMs };
}

/**
 * A client that had read the first few events reconnects with `Last-Event-ID` (their stream id, as an
 * EventSource sends it) and reads `events` more; timed from sending the request to the last of them, on a
 * connection the agent already holds. Repeated `runs` times.
 */
export async function measureCatchUp(api: GatewayApi, log: LongLog, events: number, runs: number): Promise<CatchUpResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const stream = { agent, origin: api.origin, headers: api.headers, path: `/api/v1/stream/sse?workflow_id=${log.taskId}` };
  let lastEventId = '';
  let received = 0;
  await readSse(stream, (event) => {
    lastEventId = event.id ?? lastEventId;
    return ++received === EVENTS_BEFORE_RECONNECT ? 'stop' : undefined;
  });
  const runsMs: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    // The previous read closed its connection: open one now, so the timed request does not pay for it.
    await requestJson({ ...stream, method: 'GET', path: `/api/v1/tasks/${log.taskId}` });
    const startedMs = nowMs();
    let count = 0;
    await readSse({ ...stream, headers: { ...api.headers, 'last-event-id': lastEventId } }, () => (++count === events ? 'stop' : undefined));
    if (count < events) throw new Error(`the catch-up stream ended after ${count} of ${events} events`);
    runsMs.push(nowMs() - startedMs);
  }
  agent.destroy();
  return { log, lastEventId, events, runsMs };
}
