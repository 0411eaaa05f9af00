import { fileURLToPath } from 'node:url';
import pLimit, { type LimitFunction } from 'p-limit';
import { Piscina } from 'piscina';
import type { Config } from '../../config.ts';
import { memoryOverrun, ParseLimitError, startClock, watchMemory, type RunningJob, type WatchedThreads } from './parse-limits.ts';
import type { ParseJob, ParseMessage, ParseResult, ParseTask, ReadContent } from './parse-worker.ts';

export type ParseSettings = Readonly<Config['parse']>;

/** Whose job it is, and the tool call's signal (a cancelled task stops its job at once). */
export interface ParseCaller { tenantId: string; signal: AbortSignal }

const WORKER_FILE = fileURLToPath(new URL('./parse-worker.ts', import.meta.url));
/** A tenant's jobs waiting beyond this are refused: each one holds its fetched body (TOOLS_FETCH_MAX_BYTES). */
export const MAX_WAITING_JOBS = 64;
/** An idle thread ends after this, so a gateway that reads no page keeps no thread. */
const IDLE_THREAD_MS = 60_000;
/** Parse threads give way to the event loop for the CPU (on Linux, nice applies to the one thread). */
const NICE_INCREMENT = 10;

interface Job extends RunningJob { tenantId: string }

interface Pool extends WatchedThreads {
  jobs: Map<number, Job>;
  /** Each tenant's jobs enter the pool as many at a time as it has threads. */
  tenantTurns: Map<string, LimitFunction>;
  threads: number;
}

const pools = new Map<string, Pool>();
let nextJobId = 1;

/**
 * Runs a parse job in a worker thread of the pool: the body's bytes are moved there, not copied. The job is
 * stopped, and its thread ended and replaced, when it reads for longer than the time limit (its wait for a
 * thread does not count), goes over the memory limit, or the caller's signal fires; a page whose article reader
 * is stopped so is answered with its plain text, read before (parse-worker.ts). A tenant's jobs enter the
 * pool's queue no more than `threads` at a time, so another tenant's job waits behind at most that many of them.
 */
export async function parseInWorker<J extends ParseJob>(job: J, caller: ParseCaller, settings: ParseSettings): Promise<ParseResult<J>> {
  const pool = poolFor(settings);
  if (waitingJobsOf(pool, caller.tenantId) >= MAX_WAITING_JOBS) {
    throw new Error(`too many pages are waiting to be read (${MAX_WAITING_JOBS}): try again shortly`);
  }
  const id = nextJobId++;
  const controller = new AbortController();
  const [task, transferList] = movable(job);
  pool.jobs.set(id, { tenantId: caller.tenantId, controller, timeoutMs: settings.timeoutMs, inputBytes: transferList[0]?.byteLength ?? 0 });
  const turn = tenantTurnOf(pool, caller.tenantId);
  try {
    // A job whose caller gave up while it waited for its turn is refused by piscina at once.
    return await turn(() => {
      watchMemory(pool);
      return pool.piscina.run({ id, job: task } satisfies ParseTask, { signal: AbortSignal.any([caller.signal, controller.signal]), transferList });
    });
  } catch (error) {
    if (caller.signal.aborted) throw caller.signal.reason;
    return plainTextAfter(error, pool.jobs.get(id)!, settings) as ParseResult<J>;
  } finally {
    clearTimeout(pool.jobs.get(id)?.timer);
    pool.jobs.delete(id);
    if (turn.activeCount === 0 && turn.pendingCount === 0) pool.tenantTurns.delete(caller.tenantId);
  }
}

/** A tenant's jobs not yet started on a thread (a started job knows its thread). */
const waitingJobsOf = (pool: Pool, tenantId: string) =>
  [...pool.jobs.values()].filter((job) => job.tenantId === tenantId && job.threadId === undefined).length;

function tenantTurnOf(pool: Pool, tenantId: string): LimitFunction {
  let turn = pool.tenantTurns.get(tenantId);
  if (!turn) {
    turn = pLimit(pool.threads);
    pool.tenantTurns.set(tenantId, turn);
  }
  return turn;
}

function poolFor(settings: ParseSettings): Pool {
  const key = `${settings.threads}/${settings.memoryMb}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = startPool(settings);
    pools.set(key, pool);
  }
  return pool;
}

/** Started on the first page read, so the gateway's start-up pays for no thread. */
function startPool({ threads, memoryMb }: ParseSettings): Pool {
  const piscina = new Piscina({
    filename: WORKER_FILE,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: IDLE_THREAD_MS,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
    niceIncrement: NICE_INCREMENT,
    // Messages, not Atomics.wait: an idle thread then still answers the memory check.
    atomics: 'disabled',
    env: {},
  });
  const pool: Pool = { piscina, memoryMb, threads, jobs: new Map(), tenantTurns: new Map(), isWatchingMemory: false };
  piscina.on('message', (message: ParseMessage) => {
    if ('parseStarted' in message) {
      const job = pool.jobs.get(message.parseStarted);
      if (job) startClock(job, message.threadId);
    } else {
      const job = pool.jobs.get(message.parseFallback);
      if (job) job.fallback = message.content;
    }
  });
  // A thread that fails between jobs is replaced by the pool; unheard, the event would end the gateway.
  piscina.on('error', () => {});
  return pool;
}

/** The page's plain text when a limit stopped its article reader; otherwise the failure, as an observation. */
function plainTextAfter(error: unknown, job: Job, settings: ParseSettings): ReadContent {
  const overrun = limitOf(error, job.controller.signal, settings);
  if (!overrun) throw error;
  if (!job.fallback) throw overrun;
  return { ...job.fallback, notice: `read as plain text: the article reader ${overrun.overrun}` };
}

/** The limit that stopped the job, if one did (V8's heap limit ends the thread with an error of its own). */
function limitOf(error: unknown, limits: AbortSignal, settings: ParseSettings): ParseLimitError | undefined {
  if (limits.aborted && limits.reason instanceof ParseLimitError) return limits.reason;
  if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return memoryOverrun(settings.memoryMb);
  return undefined;
}

/**
 * The job with its bytes on a buffer of their own, and that buffer, to move to the thread. A small Buffer is
 * a view of Node's shared pool, which cannot be moved: it is copied first (into a Uint8Array: a Buffer's slice
 * would be another view).
 */
function movable<J extends ParseJob>(job: J): [J, ArrayBuffer[]] {
  if (job.kind !== 'content') return [job, []];
  const { bytes } = job.body;
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes : new Uint8Array(bytes);
  return [{ ...job, body: { ...job.body, bytes: owned } }, [owned.buffer as ArrayBuffer]];
}
