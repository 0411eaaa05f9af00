import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

const OUTPUT_LIMIT_CHARS = 20_000;
const STOP_TIMEOUT_MS = 30_000;

export interface ChildServer {
  url: string;
  pid: number;
  /** The last few kB the child printed, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited within 30 s. Safe to call twice. */
  stop(): Promise<void>;
}

export interface ChildServerOptions {
  script: string;
  args?: string[];
  nodeFlags?: string[];
  cwd: string;
  env: Record<string, string>;
  port: number;
  readyTimeoutMs: number;
}

/** Spawns `script` with this Node and waits until its GET /readiness answers 200. */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const child = spawn(process.execPath, [...options.nodeFlags ?? [], options.script, ...options.args ?? []], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-OUTPUT_LIMIT_CHARS); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const server: ChildServer = {
    url: `http://127.0.0.1:${options.port}`,
    pid: child.pid!,
    output: () => output,
    stop: () => stopChild(child),
  };
  try {
    await waitForReadiness(server.url, child, options.readyTimeoutMs);
  } catch (error) {
    await server.stop();
    throw new Error(`${options.script} did not become ready: ${(error as Error).message}\n${output}`);
  }
  return server;
}

async function waitForReadiness(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) throw new Error(`exited with code ${child.exitCode} (signal ${child.signalCode})`);
    const status = await fetch(`${url}/readiness`).then((response) => response.status, () => 0);
    if (status === 200) return;
    await sleep(100);
  }
  throw new Error(`no 200 from /readiness within ${timeoutMs} ms`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
