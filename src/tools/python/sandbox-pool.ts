import { Worker } from 'node:worker_threads';
import type { SandboxMessage, SandboxOptions } from './sandbox-worker.ts';

/** A worker thread loading Pyodide; `ready` resolves once it is loaded, sealed and waiting for its one job. */
export interface Sandbox {
  worker: Worker;
  ready: Promise<void>;
}

const WORKER_SCRIPT = new URL('./sandbox-worker.ts', import.meta.url);
/** Loading takes seconds (several on a busy machine); a sandbox that needs more than this is broken. */
const LOAD_TIMEOUT_MS = 60_000;
/** The JavaScript heap of one sandbox: Pyodide's own objects, not the Python heap (that is WebAssembly memory). */
const JS_HEAP_LIMIT_MB = 256;

let spare: { memoryLimitMb: number; sandbox: Sandbox } | undefined;

/**
 * A sandbox for one call: the warm spare when there is one, otherwise a fresh one. Once it is ready the next
 * spare starts loading (not sooner: two loads at once would slow this one), so a process that runs Python pays
 * Pyodide's load time on its first call, not on every call.
 */
export function takeSandbox(memoryLimitMb: number): Sandbox {
  const warm = spare?.memoryLimitMb === memoryLimitMb ? spare.sandbox : undefined;
  if (spare && !warm) void spare.sandbox.worker.terminate();
  spare = undefined;
  const sandbox = warm ?? startSandbox(memoryLimitMb);
  sandbox.worker.ref();
  sandbox.ready.then(() => warmSpare(memoryLimitMb), () => {});
  return sandbox;
}

function warmSpare(memoryLimitMb: number): void {
  if (spare) return;
  const entry = { memoryLimitMb, sandbox: startSandbox(memoryLimitMb) };
  // An idle spare never keeps the process alive, and one that fails or dies is simply not used.
  entry.sandbox.worker.unref();
  const forget = () => { if (spare === entry) spare = undefined; };
  entry.sandbox.ready.catch(forget);
  entry.sandbox.worker.once('exit', forget);
  spare = entry;
}

function startSandbox(memoryLimitMb: number): Sandbox {
  const worker = new Worker(WORKER_SCRIPT, {
    workerData: { memoryLimitBytes: memoryLimitMb * 1024 * 1024 } satisfies SandboxOptions,
    // No secrets from the gateway's environment (the sandbox silences its console itself: see seal-worker.ts).
    env: {},
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: JS_HEAP_LIMIT_MB },
  });
  // An 'error' event nobody listens to would throw in the gateway; the exit that follows is what callers watch.
  worker.on('error', () => {});
  return { worker, ready: whenReady(worker) };
}

function whenReady(worker: Worker): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      stopWatching();
      void worker.terminate();
      reject(error);
    };
    const onMessage = (message: SandboxMessage) => {
      if (message.type !== 'ready') return;
      stopWatching();
      resolve();
    };
    const onError = (error: Error) => fail(new Error(`the Python sandbox failed to start: ${error.message}`));
    const onExit = () => fail(new Error('the Python sandbox exited while starting'));
    const timer = setTimeout(() => fail(new Error(`the Python sandbox did not start within ${LOAD_TIMEOUT_MS / 1000} s`)), LOAD_TIMEOUT_MS);
    timer.unref();
    function stopWatching() {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}
