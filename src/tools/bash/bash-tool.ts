import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import type { Readable } from 'node:stream';
import type { ToolContext, ToolDefinition } from '../registry.ts';
import { sandboxedBash } from './sandbox.ts';

export const BASH_DISABLED_MESSAGE = 'bash is disabled on this server (set TOOLS_BASH_ENABLED=1 to enable it)';
export const OUTPUT_LIMIT_BYTES = 64 * 1024;
const MAX_COMMAND_LENGTH = 10_000;
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
  description: 'Runs a bash command in an isolated sandbox with no network, in a fresh empty directory, with a time limit. '
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
  // Its sandbox keeps nothing today, but it runs whatever the model writes: treated as acting on the world.
  effects: 'external',
  execute: async (input, context) => runBash(String(input.command), context),
};

/**
 * Runs the command in a bubblewrap sandbox (sandbox.ts) that sees nothing of the server, with the time limit,
 * the output caps and the task's cancel. Still dangerous (it runs whatever the model writes), hence off by
 * default, and each task offered it waits for an approval from someone other than its requester.
 */
export async function runBash(command: string, context: Pick<ToolContext, 'settings' | 'signal'>): Promise<BashResult> {
  if (!context.settings.bash.enabled) throw new Error(BASH_DISABLED_MESSAGE);
  context.signal.throwIfAborted();
  const sandboxed = sandboxedBash(context.settings.bash, command);
  const child = spawn(sandboxed.file, sandboxed.args, sandboxed.options);
  const stdout = collectCapped(child.stdout!);
  const stderr = collectCapped(child.stderr!);
  const closed = once(child, 'close').catch(() => undefined);
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; killGroup(child); }, context.settings.bash.timeoutMs);
  const onAbort = () => killGroup(child);
  context.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const [code, killedBy] = await once(child, 'exit') as [number | null, NodeJS.Signals | null];
    // Whatever it left running in the background goes with it.
    killGroup(child);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, PIPE_DRAIN_MS).unref())]);
    context.signal.throwIfAborted();
    return { exit_code: code ?? 128 + os.constants.signals[killedBy!], stdout: stdout.text(), stderr: stderr.text(), timed_out: timedOut };
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onAbort);
    child.stdout!.destroy();
    child.stderr!.destroy();
  }
}

/** bwrap leads its process group; killed, it takes the sandbox with it (--die-with-parent, and its pid namespace ends). */
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
