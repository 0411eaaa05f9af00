import type { ToolContext, ToolDefinition } from '../registry.ts';
import { sandboxPoolFor } from './sandbox-pool.ts';
import type { PythonRun } from './sandbox-protocol.ts';
import { readWorkspaceSnapshot } from './workspace-snapshot.ts';

const MAX_CODE_LENGTH = 100_000;
const MAX_STDIN_LENGTH = 100_000;

export const pythonExecutorTool: ToolDefinition = {
  name: 'python_executor',
  description: 'Runs a Python 3 program in a sandbox (Pyodide, WebAssembly) and returns its stdout, stderr, the repr of its '
    + 'last expression (result) and the traceback if it failed (error). Standard library only: no packages to install, '
    + 'no network, no host files; every call starts a fresh interpreter, so define everything the program needs in it. '
    + 'Time and memory are limited (10 s and 512 MB unless configured otherwise); output is cut after 64 kB per stream.',
  parameters: {
    type: 'object',
    properties: {
      code: { type: 'string', minLength: 1, maxLength: MAX_CODE_LENGTH, description: 'The program, e.g. "print(sum(range(10)))"' },
      stdin: { type: 'string', maxLength: MAX_STDIN_LENGTH, description: 'Text the program reads from standard input' },
      use_workspace: {
        type: 'boolean',
        description: 'Copy the session workspace (the files of file_write) into /workspace and run there (default false); '
          + 'changes the program makes to the copies are not saved',
      },
    },
    required: ['code'],
    additionalProperties: false,
  },
  category: 'code',
  costPerUseUsd: 0,
  dangerous: true,
  // A fresh interpreter with no network on a copy of the workspace: nothing it does outlives the call.
  effects: 'none',
  execute: (input, context) => executePython(input, context),
};

async function executePython(input: Record<string, unknown>, context: ToolContext): Promise<PythonRun> {
  const settings = context.settings.python;
  return sandboxPoolFor(settings).withSandbox(context.tenantId, context.signal, async (sandbox) => {
    // Read once the turn has come, so that calls waiting for one hold no copies of their workspaces.
    const workspace = input.use_workspace === true ? await readWorkspaceSnapshot(context) : null;
    const stdin = typeof input.stdin === 'string' ? input.stdin : '';
    return sandbox.run({ code: String(input.code), stdin, workspace }, settings.timeoutMs, context.signal);
  });
}
