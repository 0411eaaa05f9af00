import { Worker } from 'node:worker_threads';
import { createOutputBuffer, readOutput, STDERR, STDOUT } from './output-buffer.ts';
import type { PythonProgram, PythonRun } from './sandbox-protocol.ts';
import type { SandboxJob, SandboxMessage, SandboxOptions } from './sandbox-worker.ts';

const WORKER_SCRIPT = new URL('./sandbox-worker.ts', import.meta.url);
/** The JavaScript heap of the sandbox's thread: Pyodide's own objects, not the Python heap (that is WebAssembly memory). */
export const JS_HEAP_LIMIT_MB = 256;
/** How often the process's resident memory is compared with its budget while a program runs. */
const MEMORY_CHECK_INTERVAL_MS = 25;

/**
 * Starts the thread a sandbox runs on (sandbox-worker.ts): it loads Pyodide, seals itself and waits for its one
 * job. Python runs on that thread, so this process's own thread stays free to enforce the limits.
 */
export function startSandboxThread(memoryLimitMb: number): Promise<Worker> {
  const worker = new Worker(WORKER_SCRIPT, {
    workerData: { memoryLimitBytes: memoryLimitMb * 1024 * 1024 } satisfies SandboxOptions,
    env: {},
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: JS_HEAP_LIMIT_MB },
  });
  return new Promise((resolve, reject) => {
    const onMessage = (message: SandboxMessage) => {
      if (message.type !== 'ready') return;
      stopWatching();
      resolve(worker);
    };
    const onError = (error: Error) => { stopWatching(); reject(new Error(`the Python sandbox failed to start: ${error.message}`)); };
    const onExit = () => { stopWatching(); reject(new Error('the Python sandbox exited while starting')); };
    function stopWatching() {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

type Outcome = Omit<PythonRun, 'stdout' | 'stderr'>;

/**
 * Runs the program on the sandbox's thread. At the time limit, or as soon as this process's resident memory
 * passes `memoryBudgetBytes` (memory the thread's own limits do not see, such as buffers allocated through
 * Pyodide's JavaScript bridge), the thread is terminated; what the program printed until then is kept.
 */
export async function runOnThread(worker: Worker, program: PythonProgram, timeoutMs: number, memoryBudgetBytes: number): Promise<PythonRun> {
  const output = createOutputBuffer();
  let outcome: Outcome;
  try {
    outcome = await runJob(worker, { ...program, output }, timeoutMs, memoryBudgetBytes);
  } finally {
    // Before the output is read: a program stopped at the time limit may still be printing.
    await worker.terminate();
  }
  return { stdout: readOutput(output, STDOUT), stderr: readOutput(output, STDERR), ...outcome };
}

function runJob(worker: Worker, job: SandboxJob, timeoutMs: number, memoryBudgetBytes: number): Promise<Outcome> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const settle = (outcome: Omit<Outcome, 'duration_ms'>) => {
      clearTimeout(timer);
      clearInterval(memoryWatch);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      resolve({ ...outcome, duration_ms: Math.round(performance.now() - startedAt) });
    };
    const onMessage = (message: SandboxMessage) => {
      if (message.type === 'done') settle({ result: message.result, error: message.error, timed_out: false });
    };
    const onError = (error: Error) => settle({ result: null, error: describeCrash(error), timed_out: false });
    const onExit = () => settle({ result: null, error: 'the Python sandbox stopped unexpectedly', timed_out: false });
    const timer = setTimeout(() => settle({
      result: null, error: `TimeoutError: the program was stopped at the time limit of ${timeoutMs} ms`, timed_out: true,
    }), timeoutMs);
    const memoryWatch = setInterval(() => {
      if (process.memoryUsage.rss() <= memoryBudgetBytes) return;
      settle({ result: null, error: `MemoryError: the program was stopped: its sandbox went over its memory budget of ${Math.round(memoryBudgetBytes / 1024 ** 2)} MB`, timed_out: false });
    }, MEMORY_CHECK_INTERVAL_MS);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage(job);
  });
}

function describeCrash(error: Error & { code?: string }): string {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'MemoryError: the program exceeded the sandbox memory limit';
  return `the Python sandbox crashed: ${error.message}`;
}
