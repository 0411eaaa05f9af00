import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Config } from '../../config.ts';
import type { ParseJob, ParseResult, ParseStarted, ParseTask } from './parse-worker.ts';

export type ParseSettings = Readonly<Config['parse']>;

const WORKER_FILE = fileURLToPath(new URL('./parse-worker.ts', import.meta.url));
/**
 * Jobs waiting for a thread beyond this are refused: each one holds its fetched body (TOOLS_FETCH_MAX_BYTES).
 * Counted here: piscina's own maxQueue does not count tasks that carry an abort signal, and all of ours do.
 */
export const MAX_WAITING_JOBS = 64;
/** An idle thread ends after this, so a gateway that reads no page keeps no thread. */
const IDLE_THREAD_MS = 60_000;
/** Parse threads give way to the event loop for the CPU (on Linux, nice applies to the one thread). */
const NICE_INCREMENT = 10;
/** V8 caps a thread's heap; its buffers (a PDF's inflated streams) are looked at this often while jobs run. */
const MEMORY_CHECK_MS = 50;

interface Job {
  controller: AbortController;
  timeoutMs: number;
  /** The bytes moved to the thread, which count among its buffers. */
  inputBytes: number;
  timer?: NodeJS.Timeout;
  threadId?: number;
}

interface Pool {
  piscina: Piscina;
  memoryMb: number;
  jobs: Map<number, Job>;
  isWatchingMemory: boolean;
}

/** A limit of the pool stopped the job; its message is the observation. */
class ParseLimitError extends Error {}

const pools = new Map<string, Pool>();
let nextJobId = 1;

/**
 * Runs a parse job in a worker thread of the pool: the body's bytes are moved there, not copied. The job is
 * stopped, and its thread ended and replaced, when it reads for longer than the time limit (its wait for a
 * thread does not count), goes over the memory limit, or the caller's signal fires.
 */
export async function parseInWorker<J extends ParseJob>(job: J, signal: AbortSignal, settings: ParseSettings): Promise<ParseResult<J>> {
  const pool = poolFor(settings);
  if (waitingJobsOf(pool) >= MAX_WAITING_JOBS) {
    throw new Error(`the gateway is reading too many pages at once (${MAX_WAITING_JOBS} waiting): try again shortly`);
  }
  const id = nextJobId++;
  const controller = new AbortController();
  const [task, transferList] = movable(job);
  pool.jobs.set(id, { controller, timeoutMs: settings.timeoutMs, inputBytes: transferList[0]?.byteLength ?? 0 });
  watchMemory(pool);
  try {
    return await pool.piscina.run({ id, job: task } satisfies ParseTask, { signal: AbortSignal.any([signal, controller.signal]), transferList });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw explained(error, controller.signal, settings);
  } finally {
    clearTimeout(pool.jobs.get(id)?.timer);
    pool.jobs.delete(id);
  }
}

/** Jobs not yet started on a thread (a started job knows its thread). */
const waitingJobsOf = (pool: Pool) => [...pool.jobs.values()].filter((job) => job.threadId === undefined).length;

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
  const pool: Pool = { piscina, memoryMb, jobs: new Map(), isWatchingMemory: false };
  piscina.on('message', (message: ParseStarted) => startClock(pool, message));
  // A thread that fails between jobs is replaced by the pool; unheard, the event would end the gateway.
  piscina.on('error', () => {});
  return pool;
}

function startClock(pool: Pool, { parseStarted, threadId }: ParseStarted): void {
  const job = pool.jobs.get(parseStarted);
  if (!job) return;
  job.threadId = threadId;
  const limit = new ParseLimitError(`reading it took longer than ${job.timeoutMs} ms (TOOLS_PARSE_TIMEOUT_MS), so it was stopped`);
  job.timer = setTimeout(() => job.controller.abort(limit), job.timeoutMs);
}

/** While jobs run, a thread whose buffers outgrow its input plus the limit has its job stopped (which ends the thread). */
function watchMemory(pool: Pool): void {
  if (pool.isWatchingMemory) return;
  pool.isWatchingMemory = true;
  const check = async () => {
    if (pool.jobs.size === 0) {
      pool.isWatchingMemory = false;
      return;
    }
    await Promise.all(pool.piscina.threads.map((thread) => stopIfOverMemory(pool, thread)));
    setTimeout(check, MEMORY_CHECK_MS).unref();
  };
  setTimeout(check, MEMORY_CHECK_MS).unref();
}

async function stopIfOverMemory(pool: Pool, thread: Piscina['threads'][number]): Promise<void> {
  const job = [...pool.jobs.values()].find((candidate) => candidate.threadId === thread.threadId);
  if (!job) return;
  const statistics = await thread.getHeapStatistics().catch(() => undefined);
  if (statistics && statistics.external_memory > job.inputBytes + pool.memoryMb * 1024 * 1024) {
    job.controller.abort(new ParseLimitError(memoryMessage(pool.memoryMb)));
  }
}

const memoryMessage = (memoryMb: number) => `reading it needed more than ${memoryMb} MB (TOOLS_PARSE_MEMORY_MB), so it was stopped`;

function explained(error: unknown, limits: AbortSignal, settings: ParseSettings): Error {
  if (limits.aborted && limits.reason instanceof ParseLimitError) return new Error(limits.reason.message);
  if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return new Error(memoryMessage(settings.memoryMb));
  return error instanceof Error ? error : new Error(String(error));
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
