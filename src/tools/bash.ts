import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { ToolContext, ToolDefinition } from './registry.ts';

export const BASH_DISABLED_MESSAGE = 'bash is disabled on this server (set TOOLS_BASH_ENABLED=1 to enable it)';
export const OUTPUT_LIMIT_BYTES = 64 * 1024;
const MAX_COMMAND_LENGTH = 10_000;
/** Not the server's PATH: that may lead into the server's own tree (node_modules/.bin). */
const COMMAND_PATH = '/usr/local/bin:/usr/bin:/bin';
/** A process that left the group but still holds our pipes is not waited for longer than this. */
const PIPE_DRAIN_MS = 1000;

export interface BashResult {
  exit_code: number;
  stdout: string;
  stderr: string;
  timed_out: boolean;
}

export const bashTool: ToolDefinition = {
  name: 'bash',
  description: 'Runs a bash command in a fresh empty directory that is removed afterwards, with a time limit. '
    + `Returns exit_code, stdout and stderr (each cut at ${OUTPUT_LIMIT_BYTES / 1024} kB) and whether it timed out. `
    + 'Nothing persists between calls.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', minLength: 1, maxLength: MAX_COMMAND_LENGTH, description: 'The command line, run with `bash -c`' },
    },
    required: ['command'],
    additionalProperties: false,
  },
  category: 'code',
  costPerUseUsd: 0,
  dangerous: true,
  execute: async (input, context) => runBash(String(input.command), context),
};

/**
 * Runs the command in a throw-away directory, as this server's user: the directory, the minimal environment
 * (no server secrets), the time limit and the output caps bound what a call sees and costs; they are not a
 * sandbox, hence the tool is dangerous and off by default.
 */
export async function runBash(command: string, context: Pick<ToolContext, 'config' | 'signal'>): Promise<BashResult> {
  if (!context.config.bash.enabled) throw new Error(BASH_DISABLED_MESSAGE);
  const directory = await mkdtemp(path.join(os.tmpdir(), 'agentgate-bash-'));
  try {
    return await runInDirectory(command, directory, context.config.bash.timeoutMs, context.signal);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function runInDirectory(command: string, directory: string, timeoutMs: number, signal: AbortSignal): Promise<BashResult> {
  signal.throwIfAborted();
  const child = spawn('/bin/bash', ['-c', command], {
    cwd: directory,
    env: { PATH: COMMAND_PATH, HOME: directory, LANG: 'C.UTF-8' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a timeout or a cancel kills what it started too.
    detached: true,
  });
  const stdout = collectCapped(child.stdout!);
  const stderr = collectCapped(child.stderr!);
  const closed = once(child, 'close').catch(() => undefined);
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; killGroup(child); }, timeoutMs);
  const onAbort = () => killGroup(child);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const [code, killedBy] = await once(child, 'exit') as [number | null, NodeJS.Signals | null];
    // Whatever it left running in the background goes with it.
    killGroup(child);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, PIPE_DRAIN_MS).unref())]);
    signal.throwIfAborted();
    return { exit_code: code ?? 128 + os.constants.signals[killedBy!], stdout: stdout.text(), stderr: stderr.text(), timed_out: timedOut };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    child.stdout!.destroy();
    child.stderr!.destroy();
  }
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

/** Keeps the first OUTPUT_LIMIT_BYTES of a stream and reads (and drops) the rest, so the writer never blocks. */
function collectCapped(stream: Readable): { text(): string } {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  stream.on('data', (chunk: Buffer) => {
    const taken = Math.min(OUTPUT_LIMIT_BYTES - kept, chunk.length);
    if (taken > 0) chunks.push(chunk.subarray(0, taken));
    kept += taken;
    dropped += chunk.length - taken;
  });
  stream.on('error', () => {});
  return {
    text: () => Buffer.concat(chunks).toString('utf8') + (dropped > 0 ? `\n[output cut at ${OUTPUT_LIMIT_BYTES} bytes; ${dropped} more bytes dropped]` : ''),
  };
}
