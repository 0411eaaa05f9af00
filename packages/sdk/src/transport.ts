import pRetry from 'p-retry';
import { retryAfterSeconds } from './errors.ts';

export interface RetryOptions {
  /** How many times a call that is safe to repeat is tried again (default 4). */
  retries?: number;
  /** The first wait in ms, doubled after each try and jittered (default 250). */
  minDelayMs?: number;
  /** The longest wait between two tries in ms, whatever the server's Retry-After (default 10 000). */
  maxDelayMs?: number;
}

/** Answers worth another try: the server was overloaded, restarting or behind a failing proxy. */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

class RetryableAnswer extends Error {
  readonly response: Response;
  constructor(response: Response) {
    super(`HTTP ${response.status}`);
    this.response = response;
  }
}

/**
 * Whether a request may be sent twice: idempotent methods, and POSTs carrying an Idempotency-Key (the server
 * replays the first answer to a repeat). Credential routes do not replay their answers, so they are not retried.
 */
export function isSafeToRepeat(request: Request): boolean {
  if (IDEMPOTENT_METHODS.has(request.method)) return true;
  if (request.method !== 'POST' || !request.headers.get('idempotency-key')) return false;
  return !new URL(request.url).pathname.startsWith('/api/v1/auth/');
}

/**
 * A fetch that tries a request again after a dropped connection or a 429/502/503/504 answer, with exponential
 * backoff (p-retry) that waits at least the server's Retry-After, for requests that are safe to repeat. The last
 * answer, good or bad, is returned; a connection failure on the last try is thrown.
 */
export function retryingFetch(send: typeof fetch, options: RetryOptions | false): (request: Request) => Promise<Response> {
  if (options === false) return (request) => send(request);
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  return async (request) => {
    if (!isSafeToRepeat(request)) return send(request);
    try {
      return await pRetry(async () => {
        const response = await send(request.clone());
        if (!RETRIED_STATUSES.has(response.status)) return response;
        throw new RetryableAnswer(response);
      }, {
        retries: options.retries ?? 4, minTimeout: options.minDelayMs ?? 250, maxTimeout: maxDelayMs, factor: 2, randomize: true,
        signal: request.signal,
        shouldRetry: ({ error, retriesLeft }) => {
          // Free the socket of an answer that will not be read; the last one is handed back whole.
          if (error instanceof RetryableAnswer && retriesLeft > 0) void error.response.body?.cancel();
          return true;
        },
        onFailedAttempt: async ({ error, retryDelay, retriesLeft }) => {
          if (!(error instanceof RetryableAnswer) || retriesLeft === 0) return;
          const askedMs = (retryAfterSeconds(error.response.headers) ?? 0) * 1000;
          const extraMs = Math.min(askedMs, maxDelayMs) - retryDelay;
          if (extraMs > 0) await delay(extraMs, request.signal);
        },
      });
    } catch (error) {
      if (error instanceof RetryableAnswer) return error.response;
      throw error;
    }
  };
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
