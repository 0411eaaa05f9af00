import { performance } from 'node:perf_hooks';

/** One request of a closed-loop run: when it was sent and when its first answer token arrived. */
export interface TimedRequest {
  query: string;
  /** Wall-clock ms (sub-ms precision), comparable with Postgres `now()` on this machine. */
  sentAtMs: number;
  /** Milliseconds from sending to the first non-empty answer text; undefined when none arrived. */
  firstTokenMs?: number;
  error?: string;
}

export interface ClosedLoopOptions {
  concurrency: number;
  durationSeconds: number;
  /** Prefix of every query, so the run's tasks are told apart from the warm-up's in the database. */
  label: string;
}

export interface ClosedLoopRun {
  requests: TimedRequest[];
  startedAt: Date;
  finishedAt: Date;
}

/** Answers one request; `onFirstToken` is called when the first non-empty answer text arrives. */
export type SendRequest = (query: string, onFirstToken: () => void) => Promise<void>;

/**
 * `concurrency` workers, each sending its next request as soon as the previous answer has ended, until
 * `durationSeconds` have passed (requests in flight then are finished and counted).
 */
export async function runClosedLoop(options: ClosedLoopOptions, send: SendRequest): Promise<ClosedLoopRun> {
  const requests: TimedRequest[] = [];
  const startedAt = new Date();
  const deadline = performance.now() + options.durationSeconds * 1000;
  let sequence = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      const query = nextQuery(options.label, ++sequence);
      const start = performance.now();
      const request: TimedRequest = { query, sentAtMs: performance.timeOrigin + start };
      requests.push(request);
      try {
        await send(query, () => { request.firstTokenMs ??= performance.now() - start; });
        if (request.firstTokenMs === undefined) request.error = 'the answer ended without text';
      } catch (error) {
        request.error = (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { requests, startedAt, finishedAt: new Date() };
}

/** Distinct queries of the same length, so every answer (which quotes the query) has the same number of tokens. */
const nextQuery = (label: string, sequence: number) => `${label} ${String(sequence).padStart(6, '0')}: what is the capital of France?`;
