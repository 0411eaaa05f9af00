import type { Piscina } from 'piscina';
import type { ReadContent } from './parse-worker.ts';

/**
 * The limits of a parse job while it runs, besides V8's heap limit: its time, counted from its start on a thread,
 * and its buffers, which V8 does not cap (a 300 KB PDF inflates to 300 MB in pdf.js's stream buffers).
 */
export interface RunningJob {
  controller: AbortController;
  timeoutMs: number;
  /** The bytes moved to the thread, which count among its buffers. */
  inputBytes: number;
  timer?: NodeJS.Timeout;
  threadId?: number;
  /** The plain-text reading, to answer with if the article reader is stopped. */
  fallback?: ReadContent;
}

export interface WatchedThreads {
  piscina: Piscina;
  memoryMb: number;
  jobs: Map<number, RunningJob>;
  isWatchingMemory: boolean;
}

/** A limit of the pool stopped the job; `overrun` says which, to end the observation's sentence. */
export class ParseLimitError extends Error {
  overrun: string;
  constructor(overrun: string) {
    super(`reading it ${overrun}, so it was stopped`);
    this.overrun = overrun;
  }
}

/** How often the threads' buffers are looked at while jobs run. */
const MEMORY_CHECK_MS = 50;

export const memoryOverrun = (memoryMb: number) => new ParseLimitError(`needed more than ${memoryMb} MB (TOOLS_PARSE_MEMORY_MB)`);

/** The job has started on `threadId`: its time limit runs from now. */
export function startClock(job: RunningJob, threadId: number): void {
  job.threadId = threadId;
  const limit = new ParseLimitError(`took longer than ${job.timeoutMs} ms (TOOLS_PARSE_TIMEOUT_MS)`);
  job.timer = setTimeout(() => job.controller.abort(limit), job.timeoutMs);
}

/** While jobs run, a thread whose buffers outgrow its input plus the limit has its job stopped (which ends the thread). */
export function watchMemory(threads: WatchedThreads): void {
  if (threads.isWatchingMemory) return;
  threads.isWatchingMemory = true;
  const check = async () => {
    if (threads.jobs.size === 0) {
      threads.isWatchingMemory = false;
      return;
    }
    await Promise.all(threads.piscina.threads.map((thread) => stopIfOverMemory(threads, thread)));
    setTimeout(check, MEMORY_CHECK_MS).unref();
  };
  setTimeout(check, MEMORY_CHECK_MS).unref();
}

async function stopIfOverMemory(threads: WatchedThreads, thread: Piscina['threads'][number]): Promise<void> {
  const job = [...threads.jobs.values()].find((candidate) => candidate.threadId === thread.threadId);
  if (!job) return;
  const statistics = await thread.getHeapStatistics().catch(() => undefined);
  if (statistics && statistics.external_memory > job.inputBytes + threads.memoryMb * 1024 * 1024) {
    job.controller.abort(memoryOverrun(threads.memoryMb));
  }
}
