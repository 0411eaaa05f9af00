import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from 'pino';

/**
 * Whether this process takes new work: below WORKER_MEMORY_LIMIT_MB of resident memory it does; above it,
 * tasks it is offered go to (or stay in) the queue, where they wait durably for any worker with room.
 */
export interface MemoryAdmission {
  admits(): boolean;
}

const BYTES_PER_MIB = 1024 * 1024;
/**
 * How long one reading of the resident memory answers for: each reading is a read of /proc (about 0.7 % of the
 * gateway's CPU at 32 streamed chat completions when every direct start read it), and memory does not move far
 * toward the limit in a tenth of a second.
 */
const RSS_READING_MAX_AGE_MS = 100;

export function createMemoryAdmission(
  limitMiB: number, readRssBytes: () => number = process.memoryUsage.rss, now: () => number = performance.now.bind(performance),
): MemoryAdmission {
  let readAt = Number.NEGATIVE_INFINITY;
  let rssBytes = 0;
  return {
    admits: () => {
      if (now() - readAt >= RSS_READING_MAX_AGE_MS) [rssBytes, readAt] = [readRssBytes(), now()];
      return rssBytes < limitMiB * BYTES_PER_MIB;
    },
  };
}

export interface QueuePoller {
  pollQueue(exec: unknown, queue: { name: string }): Promise<boolean>;
}

/**
 * Stops the engine's queue dispatcher from polling `queueName` while `admission` refuses, so this process
 * claims nothing from it and the queued tasks stay for other workers. The engine has no public way to pause
 * dequeuing in one process (its queue limits live in the database, shared by every process, and `listenQueues`
 * is fixed at launch), so this wraps its dispatcher's poll; if a later engine version moves it, start-up logs
 * that only tasks started on arrival are held back, and the admission test fails.
 */
export function holdQueueWhileRefused(queueName: string, admission: MemoryAdmission, logger: Logger, poller = queueDispatcher()): boolean {
  if (!poller) {
    logger.warn('the engine\'s queue dispatcher was not found: WORKER_MEMORY_LIMIT_MB holds back only tasks started on arrival');
    return false;
  }
  const poll = poller.pollQueue.bind(poller);
  let isHolding = false;
  poller.pollQueue = async (exec, queue) => {
    if (queue.name === queueName) {
      const admits = admission.admits();
      if (admits === isHolding) {
        isHolding = !admits;
        logger.warn({ rss_mib: Math.round(process.memoryUsage.rss() / BYTES_PER_MIB) }, admits ? 'memory below WORKER_MEMORY_LIMIT_MB: taking tasks from the queue again' : 'memory over WORKER_MEMORY_LIMIT_MB: taking no new tasks until it falls');
      }
      // No contention to report: the poll interval stays short, so taking resumes soon after memory falls.
      if (!admits) return false;
    }
    return poll(exec, queue);
  };
  return true;
}

function queueDispatcher(): QueuePoller | undefined {
  const require = createRequire(import.meta.url);
  try {
    const entry = require.resolve('@dbos-inc/dbos-sdk');
    const runner = (require(path.join(path.dirname(entry), 'wfqueue.js')) as { wfQueueRunner?: Partial<QueuePoller> }).wfQueueRunner;
    return typeof runner?.pollQueue === 'function' ? runner as QueuePoller : undefined;
  } catch {
    return undefined;
  }
}
