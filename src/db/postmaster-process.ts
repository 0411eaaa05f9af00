import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const FAST_SHUTDOWN_TIMEOUT_MS = 10_000;
const IMMEDIATE_SHUTDOWN_TIMEOUT_MS = 5_000;
const EXIT_POLL_MS = 50;

export interface PostmasterPid {
  pid: number;
  port: number;
}

/**
 * Reads the lock file a server writes on start and removes on a clean stop (line 1 the pid, line 4 the port).
 * A server whose Node parent was killed with SIGKILL keeps running and keeps this file.
 */
export async function readPostmasterPid(clusterDir: string): Promise<PostmasterPid | undefined> {
  let text: string;
  try {
    text = await readFile(postmasterPidPath(clusterDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const lines = text.split('\n');
  return { pid: Number.parseInt(lines[0] ?? '', 10), port: Number.parseInt(lines[3] ?? '', 10) };
}

export async function removePostmasterPid(clusterDir: string): Promise<void> {
  await rm(postmasterPidPath(clusterDir), { force: true });
}

/**
 * True while `pid` is a postmaster serving `clusterDir`. Checking the command line, not just that the pid is
 * alive, guards against a pid the OS has since handed to another process, and against a zombie: a server that
 * exited after its parent died but was not reaped (its command line reads empty).
 */
export async function isPostmasterRunning(pid: number, clusterDir: string): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const commandLine = await readCommandLine(pid);
  return `${commandLine} `.includes(` -D ${clusterDir} `);
}

/**
 * Stops a postmaster as `pg_ctl stop -m fast` does (SIGINT: roll back open transactions, checkpoint, exit) and
 * waits for it to go. If it hangs, escalates to an immediate shutdown (SIGQUIT; the next start runs recovery).
 */
export async function stopPostmaster(
  pid: number,
  clusterDir: string,
  requestFastShutdown: () => void = () => signalProcess(pid, 'SIGINT'),
): Promise<void> {
  requestFastShutdown();
  if (await waitForExit(pid, clusterDir, FAST_SHUTDOWN_TIMEOUT_MS)) return;
  signalProcess(pid, 'SIGQUIT');
  if (await waitForExit(pid, clusterDir, IMMEDIATE_SHUTDOWN_TIMEOUT_MS)) return;
  throw new Error(`postgres (pid ${pid}, ${clusterDir}) did not stop`);
}

/** True while `pid` runs (a zombie, exited but not yet reaped, has an empty command line and does not count). */
export async function isProcessAlive(pid: number): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return (await readCommandLine(pid)).trim() !== '';
}

export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: nothing to stop.
  }
}

async function waitForExit(pid: number, clusterDir: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isPostmasterRunning(pid, clusterDir)) {
    if (Date.now() >= deadline) return false;
    await delay(EXIT_POLL_MS);
  }
  return true;
}

async function readCommandLine(pid: number): Promise<string> {
  try {
    if (process.platform === 'linux') return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
    const { stdout } = await execFileAsync('ps', ['-o', 'command=', '-p', String(pid)]);
    return stdout.trim();
  } catch {
    return '';
  }
}

function postmasterPidPath(clusterDir: string): string {
  return path.join(clusterDir, 'postmaster.pid');
}
