import autocannon from 'autocannon';
import { percentile } from './percentile.ts';

const REQUEST_TIMEOUT_SECONDS = 10;

export interface LoadOptions {
  /** Full URL of the POST route, on 127.0.0.1. */
  url: string;
  connections: number;
  /** How long to send requests for; or, given `amount`, ignored: then exactly that many are sent, however long it takes. */
  durationSeconds: number;
  amount?: number;
  /** Prefix of every query, so runs and warm-ups are told apart in the database. */
  label: string;
  /** Fields every body carries beside its query (a mode, a context). */
  fields?: Record<string, unknown>;
}

export interface LoadResult {
  startedAt: Date;
  finishedAt: Date;
  /** 2xx answers per second of the run. */
  submissionsPerSecond: number;
  succeeded: number;
  non2xx: number;
  statusCounts: Record<string, number>;
  /** Connection errors and timeouts, as autocannon counts them. */
  errors: number;
  latency: { p50: number; p90: number; p99: number; max: number };
}

/**
 * `connections` keep-alive clients, each sending its next POST as soon as the previous one is answered,
 * for `durationSeconds`. Every body holds a distinct small query. Latencies are kept exactly (autocannon's
 * own histogram rounds to whole milliseconds).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let sequence = 0;
  const latencies: number[] = [];
  const statusCounts: Record<string, number> = {};
  const startedAt = new Date();
  const instance = autocannon({
    url: options.url,
    // autocannon refuses more clients than requests.
    connections: Math.min(options.connections, options.amount ?? Number.POSITIVE_INFINITY),
    duration: options.durationSeconds,
    amount: options.amount,
    timeout: REQUEST_TIMEOUT_SECONDS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ ...options.fields, query: nextQuery(options.label, ++sequence) }) }) }],
  });
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
  });
  const result = await instance;
  const finishedAt = new Date();
  latencies.sort((left, right) => left - right);
  return {
    startedAt,
    finishedAt,
    submissionsPerSecond: latencies.length / ((finishedAt.getTime() - startedAt.getTime()) / 1000),
    succeeded: latencies.length,
    non2xx: result.non2xx,
    statusCounts,
    errors: result.errors,
    latency: {
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: latencies.at(-1) ?? Number.NaN,
    },
  };
}

/**
 * The default is an arithmetic question, which the router of a task without a mode plans (issue 30: a colon, "plus");
 * BENCH_QUERY=simple sends a short single question it answers with one agent and no planning call.
 */
const nextQuery = (label: string, sequence: number) => (process.env.BENCH_QUERY === 'simple'
  ? `${label} ${sequence} who wrote Hamlet?`
  : `${label} #${sequence}: what is ${sequence} plus ${sequence % 7}?`);
