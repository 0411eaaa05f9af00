import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

const OUTPUT_LIMIT_CHARS = 20_000;
const STOP_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 100;

export interface ChildProcessHandle {
  pid: number;
  /** The last few kB the child printed, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited within 30 s. Safe to call twice. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would end it; resolves once it has exited. */
  kill(): Promise<void>;
}

export interface ChildServer extends ChildProcessHandle {
  url: string;
}

export interface ChildProcessOptions {
  script: string;
  args?: string[];
  nodeFlags?: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface ChildServerOptions extends ChildProcessOptions {
  port: number;
  readyTimeoutMs: number;
}

/** Spawns `script` with this Node and waits until its GET /readiness answers 200. */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const child = spawnChild(options);
  const server = { ...child, url: `http://127.0.0.1:${options.port}` };
  await waitUntilReady(server, options.script, options.readyTimeoutMs, async () =>
    (await fetch(`${server.url}/readiness`).then((response) => response.status, () => 0)) === 200);
  return server;
}

/**
 * Spawns `script` with this Node and waits until its output matches `readyOutput`: for a process that serves
 * no HTTP and says when it has started.
 */
export async function startChildProcess(options: ChildProcessOptions & { readyOutput: RegExp; readyTimeoutMs: number }): Promise<ChildProcessHandle> {
  const child = spawnChild(options);
  await waitUntilReady(child, options.script, options.readyTimeoutMs, async () => options.readyOutput.test(child.output()));
  return child;
}

function spawnChild(options: ChildProcessOptions): ChildProcessHandle & { exit(): string | undefined } {
  const child = spawn(process.execPath, [...options.nodeFlags ?? [], options.script, ...options.args ?? []], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-OUTPUT_LIMIT_CHARS); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    pid: child.pid!,
    output: () => output,
    stop: () => stopChild(child),
    kill: () => killChild(child),
    exit: () => (hasExited(child) ? `exited with code ${child.exitCode} (signal ${child.signalCode})` : undefined),
  };
}

async function waitUntilReady(child: ReturnType<typeof spawnChild>, script: string, timeoutMs: number, isReady: () => Promise<boolean>): Promise<void> {
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const exit = child.exit();
      if (exit) throw new Error(exit);
      if (await isReady()) return;
      if (Date.now() >= deadline) throw new Error(`not ready within ${timeoutMs} ms`);
      await sleep(POLL_INTERVAL_MS);
    }
  } catch (error) {
    await child.stop();
    throw new Error(`${script} did not become ready: ${(error as Error).message}\n${child.output()}`);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

async function killChild(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
