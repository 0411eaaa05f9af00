import http from 'node:http';
import { percentile } from '../submit/percentile.ts';
import type { GatewayApi } from './gateway-api.ts';
import { readSse, requestJson, type AgentRequest } from './sse-client.ts';
import { nowMs } from './subscriber-protocol.ts';

export interface FirstEventSample {
  /** Sending the submission → the first event of the task's stream. */
  totalMs: number;
  /** Sending the submission → its answer. */
  submitMs: number;
  /** Sending the stream request → its first event. */
  streamMs: number;
  firstType: string;
}

export interface FirstEventSummary {
  clients: number;
  samples: number;
  total: { p50: number; p90: number; p99: number; max: number };
  submitP50: number;
  streamP50: number;
  /** The first events' types, most frequent first. */
  firstTypes: string;
}

/**
 * `clients` concurrent clients, each submitting `perClient` tasks one after another: submit, then open
 * the task's stream at once on the same kept-alive agent, time the first event, and read the stream to
 * its end (so its connection goes back to the agent for the next submission). Tasks use the mock model
 * without delay.
 */
export async function measureFirstEvents(api: GatewayApi, clients: number, perClient: number, label: string): Promise<FirstEventSummary> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients * 2 });
  const request: AgentRequest = { agent, origin: api.origin, headers: api.headers, path: '' };
  // Connect every socket the run will use before timing anything.
  await Promise.all(Array.from({ length: clients * 2 }, () => requestJson({ ...request, method: 'GET', path: '/api/v1/tasks?limit=1' })));
  const samples: FirstEventSample[] = [];
  let sequence = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let index = 0; index < perClient; index += 1) samples.push(await submitAndWaitForFirstEvent(request, `${label} #${++sequence}: what is 2 plus 2?`));
  }));
  agent.destroy();
  return summarize(clients, samples);
}

async function submitAndWaitForFirstEvent(request: AgentRequest, query: string): Promise<FirstEventSample> {
  const startedMs = nowMs();
  const answer = await requestJson({ ...request, method: 'POST', path: '/api/v1/tasks', body: { query } });
  if (answer.status !== 200) throw new Error(`POST /api/v1/tasks answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  const submittedMs = nowMs();
  const { task_id: taskId } = answer.body as { task_id: string };
  let first: { atMs: number; type: string } | undefined;
  await readSse({ ...request, path: `/api/v1/stream/sse?workflow_id=${taskId}` }, (event) => {
    first ??= { atMs: nowMs(), type: event.event ?? 'message' };
  });
  if (!first) throw new Error(`the stream of task ${taskId} ended without an event`);
  return { totalMs: first.atMs - startedMs, submitMs: submittedMs - startedMs, streamMs: first.atMs - submittedMs, firstType: first.type };
}

function summarize(clients: number, samples: FirstEventSample[]): FirstEventSummary {
  const sorted = (pick: (sample: FirstEventSample) => number) => samples.map(pick).sort((left, right) => left - right);
  const total = sorted((sample) => sample.totalMs);
  const types = new Map<string, number>();
  for (const sample of samples) types.set(sample.firstType, (types.get(sample.firstType) ?? 0) + 1);
  return {
    clients,
    samples: samples.length,
    total: { p50: percentile(total, 0.5), p90: percentile(total, 0.9), p99: percentile(total, 0.99), max: total.at(-1) ?? Number.NaN },
    submitP50: percentile(sorted((sample) => sample.submitMs), 0.5),
    streamP50: percentile(sorted((sample) => sample.streamMs), 0.5),
    firstTypes: [...types].sort((left, right) => right[1] - left[1]).map(([type, count]) => `${type} (${count})`).join(', '),
  };
}
