import pRetry from 'p-retry';
import type { Logger } from 'pino';
import { databaseRetries } from '../observability/metrics.ts';
import { isDatabaseUnavailable, isQueryTimeout, isTransientConflict } from './database-errors.ts';

/**
 * Runs a transaction again when Postgres rolled it back for a deadlock or a serialization failure.
 * Safe for any transaction: the losing attempt left nothing behind.
 */
export function retryConflicts<T>(work: () => Promise<T>): Promise<T> {
  return pRetry(work, {
    retries: 5, minTimeout: 5, maxTimeout: 200, randomize: true,
    shouldRetry: ({ error }) => isTransientConflict(error) && countRetry('conflict'),
  });
}

/**
 * The longest wait between two attempts at a database that does not answer, ours and the engine's
 * (engine.ts, keepEngineRetriesShort): once it answers again, waiting work resumes within this.
 */
export const DATABASE_RETRY_MAX_WAIT_MS = 5_000;

export interface WaitOptions {
  logger: Logger;
  /** Names the work in the log, e.g. `append events`. */
  what: string;
  signal?: AbortSignal;
}

/**
 * For idempotent background work (workflow steps, keyed event writes): also waits out a database that is
 * unreachable, restarting or frozen, as the engine does for its own records, so an outage delays tasks
 * instead of failing them. Only for work that may run twice: after a lost connection nobody knows
 * whether the last attempt committed.
 */
export function retryUntilDatabaseAnswers<T>(work: () => Promise<T>, options: WaitOptions): Promise<T> {
  let timeouts = 0;
  return pRetry(work, {
    retries: Number.POSITIVE_INFINITY, minTimeout: 100, maxTimeout: DATABASE_RETRY_MAX_WAIT_MS, randomize: true, signal: options.signal,
    shouldRetry: ({ error, attemptNumber, retryDelay }) => {
      if (isTransientConflict(error)) return countRetry('conflict');
      // A statement that waited out a frozen or overloaded server may hit its timeout once it runs; one that
      // keeps timing out is slow in itself, and fails after a few attempts.
      if (isQueryTimeout(error)) return ++timeouts <= MAX_TIMEOUT_RETRIES && countRetry('timeout');
      if (!isDatabaseUnavailable(error)) return false;
      if (attemptNumber === 1 || attemptNumber % 10 === 0) {
        options.logger.warn({ err: error, attempt: attemptNumber, retry_in_ms: retryDelay }, `database unavailable; will ${options.what} when it answers`);
      }
      return countRetry('unavailable');
    },
  });
}

const MAX_TIMEOUT_RETRIES = 5;

function countRetry(reason: 'conflict' | 'unavailable' | 'timeout'): true {
  databaseRetries.inc({ reason });
  return true;
}
