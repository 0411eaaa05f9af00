import { percentile } from '../submit/percentile.ts';
import type { ClosedLoopRun } from './closed-loop.ts';

export interface TtftSummary {
  requests: number;
  requestsPerSecond: number;
  errors: number;
  /** The most frequent error message, for the log. */
  firstError: string | undefined;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** TTFT percentiles of the requests that got a first token; every other request is an error. */
export function summarizeTtft(run: ClosedLoopRun): TtftSummary {
  const ttft = run.requests.flatMap((request) => (request.firstTokenMs === undefined ? [] : [request.firstTokenMs])).sort((left, right) => left - right);
  const failed = run.requests.filter((request) => request.error !== undefined || request.firstTokenMs === undefined);
  const seconds = (run.finishedAt.getTime() - run.startedAt.getTime()) / 1000;
  return {
    requests: run.requests.length,
    requestsPerSecond: (run.requests.length - failed.length) / seconds,
    errors: failed.length,
    firstError: failed[0]?.error,
    p50: percentile(ttft, 0.5),
    p90: percentile(ttft, 0.9),
    p99: percentile(ttft, 0.99),
    max: ttft.at(-1) ?? Number.NaN,
  };
}
