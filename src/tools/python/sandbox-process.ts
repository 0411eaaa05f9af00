import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HostJob, HostMessage, HostOptions, PythonProgram, PythonRun } from './sandbox-protocol.ts';

const HOST_SCRIPT = fileURLToPath(new URL('./sandbox-host.ts', import.meta.url));
/** Loading takes seconds (several on a busy machine); a sandbox that needs more than this is broken. */
const LOAD_TIMEOUT_MS = 60_000;
/**
 * After the program's time limit, how long its process may take to report before it is killed. It reports
 * within milliseconds (its own thread stops the program); this is for a process the system has stalled.
 */
const REPORT_GRACE_MS = 5_000;

interface ExitStatus { code: number | null; signal: NodeJS.Signals | null }

/** The gateway's side of one sandbox process (sandbox-host.ts), which runs at most one program. */
export interface SandboxProcess {
  /** Resolves once the sandbox is loaded and waits for its program; rejects with why it could not start. */
  ready: Promise<void>;
  /**
   * Runs the program once the sandbox is loaded; rejects with why it could not start. When `signal` aborts,
   * the process is killed at once and the call rejects with the signal's reason.
   */
  run(program: PythonProgram, timeoutMs: number, signal: AbortSignal): Promise<PythonRun>;
  /** Resolves once the process is gone, however it ended. */
  exited: Promise<void>;
  /** Kills the process, if it still runs, and resolves once it is gone. */
  stop(): Promise<void>;
  /** Whether the process keeps the gateway's event loop alive: a sandbox in use does, an idle spare does not. */
  hold(isHeld: boolean): void;
}

export function startSandboxProcess(memoryLimitMb: number): SandboxProcess {
  const child = fork(HOST_SCRIPT, [JSON.stringify({ memoryLimitMb } satisfies HostOptions)], {
    // No secret of the gateway's environment reaches the sandbox, nor the gateway's own Node flags.
    env: {}, execArgv: [], serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  let isStoppedHere = false;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A process that could not be spawned never exits; other errors (a failed send) are followed by the exit.
    child.on('error', () => { if (child.pid === undefined) resolve({ code: null, signal: null }); });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      isStoppedHere = true;
      child.kill('SIGKILL');
    }
    await exited;
  };
  const ready = whenReady(child, exited);
  // A sandbox that cannot start is not left behind; whoever waits on `ready` learns why.
  ready.catch(() => stop());
  return {
    ready,
    exited: exited.then(() => {}),
    run: (program, timeoutMs, signal) => runProgram({ child, ready, exited, stop, wasStoppedHere: () => isStoppedHere }, { program, timeoutMs }, signal),
    stop,
    hold(isHeld) {
      if (isHeld) {
        child.ref();
        child.channel?.ref();
      } else {
        child.unref();
        child.channel?.unref();
      }
    },
  };
}

function whenReady(child: ChildProcess, exited: Promise<ExitStatus>): Promise<void> {
  const watching = new AbortController();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Python sandbox did not start within ${LOAD_TIMEOUT_MS / 1000} s`)), LOAD_TIMEOUT_MS);
    timer.unref();
    watching.signal.addEventListener('abort', () => clearTimeout(timer));
    const onMessage = (message: HostMessage) => {
      if (message.type === 'ready') resolve();
      if (message.type === 'failed') reject(new Error(message.reason));
    };
    child.on('message', onMessage);
    watching.signal.addEventListener('abort', () => child.off('message', onMessage));
    void exited.then((status) => reject(new Error(`the Python sandbox exited while starting (${describeExit(status)})`)));
  }).finally(() => watching.abort());
}

interface RunningProcess {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<ExitStatus>;
  stop(): Promise<void>;
  wasStoppedHere(): boolean;
}

/** Waits for the sandbox to be loaded, sends it the job and waits for its report; an abort kills it at any point. */
function runProgram(sandbox: RunningProcess, job: HostJob, signal: AbortSignal): Promise<PythonRun> {
  signal.throwIfAborted();
  const { child } = sandbox;
  let startedAt = performance.now();
  const failedRun = (error: string, timedOut: boolean): PythonRun =>
    ({ stdout: '', stderr: '', result: null, error, duration_ms: Math.round(performance.now() - startedAt), timed_out: timedOut });
  return new Promise<PythonRun>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let isSettled = false;
    const settle = (outcome: () => void) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      child.off('message', onMessage);
      outcome();
    };
    const onMessage = (message: HostMessage) => {
      if (message.type === 'done') settle(() => resolve(message.run));
    };
    const onAbort = () => settle(() => {
      void sandbox.stop();
      reject(signal.reason);
    });
    signal.addEventListener('abort', onAbort, { once: true });
    sandbox.ready.then(() => {
      if (isSettled) return;
      startedAt = performance.now();
      timer = setTimeout(() => settle(() => {
        void sandbox.stop();
        resolve(failedRun(`TimeoutError: the program was stopped at the time limit of ${job.timeoutMs} ms; its sandbox did not answer, so its output is lost`, true));
      }), job.timeoutMs + REPORT_GRACE_MS);
      void sandbox.exited.then((status) => settle(() => resolve(failedRun(describeDeath(status, sandbox.wasStoppedHere()), false))));
      child.on('message', onMessage);
      child.send(job, (error) => { if (error) void sandbox.stop(); });
    }, (error: unknown) => settle(() => reject(error)));
  });
}

/** A sandbox process that ended before reporting, not stopped by the gateway. */
function describeDeath(status: ExitStatus, wasStoppedHere: boolean): string {
  if (status.signal === 'SIGKILL' && !wasStoppedHere) {
    return 'MemoryError: the Python sandbox was killed (SIGKILL), most likely by the system for want of memory; its output is lost';
  }
  return `the Python sandbox stopped unexpectedly (${describeExit(status)}); its output is lost`;
}

const describeExit = (status: ExitStatus) => (status.signal ? `signal ${status.signal}` : `exit code ${status.code}`);
