import type { Worker } from 'node:worker_threads';
import { createOutputBuffer, readOutput, STDERR, STDOUT } from './output-buffer.ts';
import { takeSandbox } from './sandbox-pool.ts';
import type { SandboxJob, SandboxMessage } from './sandbox-worker.ts';
import type { SandboxFile } from './workspace-snapshot.ts';

export interface PythonLimits {
  timeoutMs: number;
  /** The WebAssembly memory of the interpreter, Python's heap included. */
  memoryLimitMb: number;
}

export interface PythonProgram {
  code: string;
  stdin: string;
  /** The session's files, copied under /workspace (the working directory then); null for none. */
  workspace: SandboxFile[] | null;
}

export interface PythonRun {
  stdout: string;
  stderr: string;
  /** The repr of the last expression, when the code ends with one. */
  result: string | null;
  /** The traceback (or why the sandbox stopped), when the code did not run to its end. */
  error: string | null;
  /** The time the code ran, loading of the interpreter excluded. */
  duration_ms: number;
  timed_out: boolean;
}

type Outcome = Omit<PythonRun, 'stdout' | 'stderr'>;

/**
 * Runs the code in a fresh sandbox on its own thread, so a runaway program costs a thread, never the gateway's
 * event loop. At the time limit, or when `signal` aborts (which rejects with its reason), the thread is terminated.
 */
export async function runPython(program: PythonProgram, limits: PythonLimits, signal: AbortSignal): Promise<PythonRun> {
  signal.throwIfAborted();
  const { worker, ready } = takeSandbox(limits.memoryLimitMb);
  const output = createOutputBuffer();
  const stop = () => void worker.terminate();
  signal.addEventListener('abort', stop, { once: true });
  let outcome: Outcome;
  try {
    await ready;
    outcome = await runJob(worker, { ...program, output }, limits.timeoutMs);
  } catch (error) {
    signal.throwIfAborted();
    throw error;
  } finally {
    signal.removeEventListener('abort', stop);
    // Before the output is read: a program stopped at the time limit may still be printing.
    await worker.terminate();
  }
  signal.throwIfAborted();
  return { stdout: readOutput(output, STDOUT), stderr: readOutput(output, STDERR), ...outcome };
}

function runJob(worker: Worker, job: SandboxJob, timeoutMs: number): Promise<Outcome> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const settle = (outcome: Omit<Outcome, 'duration_ms'>) => {
      clearTimeout(timer);
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
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage(job);
  });
}

function describeCrash(error: Error & { code?: string }): string {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'MemoryError: the program exceeded the sandbox memory limit';
  return `the Python sandbox crashed: ${error.message}`;
}
