import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { loadPyodide, type PyodideInterface } from 'pyodide';
import { appendOutput, STDERR, STDOUT, type OutputStream } from './output-buffer.ts';
import { capWasmMemory, refuseHost, refuseNetwork } from './seal-worker.ts';
import type { SandboxFile } from './workspace-snapshot.ts';

/**
 * One sandbox: a worker thread that loads Pyodide, seals itself, says `ready`, runs exactly one job and reports
 * `done`. The gateway terminates it afterwards (or at the time limit), so no state outlives a call.
 */
export interface SandboxOptions { memoryLimitBytes: number }
export interface SandboxJob {
  code: string;
  stdin: string;
  output: SharedArrayBuffer;
  /** Copied under /workspace, which becomes the working directory; null: no workspace. */
  workspace: SandboxFile[] | null;
}
export type SandboxMessage = { type: 'ready' } | { type: 'done'; result: string | null; error: string | null };

const port = parentPort!;
const { memoryLimitBytes } = workerData as SandboxOptions;

capWasmMemory(memoryLimitBytes);
refuseNetwork();
const pyodide = await loadPyodide({ env: {}, jsglobals: pythonVisibleGlobals(), stdout: () => {}, stderr: () => {} });
pyodide.runPython(readFileSync(new URL('./sandbox-prelude.py', import.meta.url), 'utf8'), { filename: '<sandbox>' });
const runCode = pyodide.globals.get('_agentgate_run') as (source: string) => Promise<string>;
delete (pyodide.FS as unknown as { filesystems: Record<string, unknown> }).filesystems.NODEFS;
refuseHost();

port.once('message', async (job: SandboxJob) => {
  connectStreams(pyodide, job);
  if (job.workspace) copyWorkspace(pyodide, job.workspace);
  const { result, error } = JSON.parse(await runCode(job.code)) as { result: string | null; error: string | null };
  port.postMessage({ type: 'done', result, error } satisfies SandboxMessage);
});
port.postMessage({ type: 'ready' } satisfies SandboxMessage);

/** The `js` module of Python: what Pyodide's own Python code imports from it, and no `fetch` or `process`. */
function pythonVisibleGlobals(): object {
  const { setTimeout, clearTimeout, setInterval, clearInterval, WeakRef, Array, Object, Date, Map, Uint8Array } = globalThis;
  return { setTimeout, clearTimeout, setInterval, clearInterval, WeakRef, Array, Object, Date, Map, Uint8Array };
}

function connectStreams(python: PyodideInterface, job: SandboxJob): void {
  const input = new TextEncoder().encode(job.stdin);
  let offset = 0;
  python.setStdin({
    read(buffer: Uint8Array) {
      const chunk = input.subarray(offset, offset + buffer.length);
      buffer.set(chunk);
      offset += chunk.length;
      return chunk.length;
    },
  });
  python.setStdout({ write: (bytes: Uint8Array) => writeOutput(job.output, STDOUT, bytes) });
  python.setStderr({ write: (bytes: Uint8Array) => writeOutput(job.output, STDERR, bytes) });
}

const WORKSPACE_DIR = '/workspace';

/** Into Pyodide's in-memory file system: the program may change the copies, the session's files stay as they are. */
function copyWorkspace(python: PyodideInterface, files: SandboxFile[]): void {
  python.FS.mkdirTree(WORKSPACE_DIR);
  for (const file of files) {
    const target = `${WORKSPACE_DIR}/${file.path}`;
    python.FS.mkdirTree(target.slice(0, target.lastIndexOf('/')));
    python.FS.writeFile(target, file.content);
  }
  python.FS.chdir(WORKSPACE_DIR);
}

function writeOutput(output: SharedArrayBuffer, stream: OutputStream, bytes: Uint8Array): number {
  appendOutput(output, stream, bytes);
  return bytes.length;
}
