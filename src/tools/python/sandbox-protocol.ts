import type { SandboxFile } from './workspace-snapshot.ts';

/** What a sandbox runs: one program, with its standard input and, when asked, a copy of the session's files. */
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

/** Given to a sandbox process when it starts (as its one argument, JSON). */
export interface HostOptions {
  /** The WebAssembly memory of the interpreter, Python's heap included. */
  memoryLimitMb: number;
}

/** The one job the gateway sends a sandbox process once it is ready. */
export interface HostJob {
  program: PythonProgram;
  timeoutMs: number;
}

/** What a sandbox process tells the gateway: loaded (or why not), then how its one program went. */
export type HostMessage = { type: 'ready' } | { type: 'failed'; reason: string } | { type: 'done'; run: PythonRun };
