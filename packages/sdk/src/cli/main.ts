import { Command, CommanderError } from 'commander';
import { AgentgateError } from '../errors.ts';
import { addApprovalCommands } from './commands/approvals.ts';
import { addKeyCommands } from './commands/keys.ts';
import { addProfileCommands } from './commands/profiles.ts';
import { addScheduleCommands } from './commands/schedules.ts';
import { addSessionCommands } from './commands/sessions.ts';
import { addSubmitCommand } from './commands/submit.ts';
import { addTaskCommands } from './commands/tasks.ts';
import { addToolCommands } from './commands/tools.ts';
import { configPath } from './config.ts';
import { createContext, type GlobalFlags, type Io } from './context.ts';
import { EXIT, exitCodeOf } from './exit-codes.ts';
import { colorsFor } from './output.ts';

export { EXIT } from './exit-codes.ts';

/** Runs the command line (`argv` as in process.argv) and resolves with the exit code. */
export async function main(argv: string[], io: Io = { out: process.stdout, err: process.stderr, env: process.env }): Promise<number> {
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort(new Interrupted());
  process.once('SIGINT', onSigint);
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, interrupt.signal, (code) => { exitCode = code; });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    return reportError(error, io, program.opts<GlobalFlags>());
  } finally {
    process.off('SIGINT', onSigint);
  }
}

class Interrupted extends Error {}

function reportError(error: unknown, io: Io, flags: GlobalFlags): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof Interrupted) return EXIT.interrupted;
  const code = exitCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (flags.json) {
    const details = error instanceof AgentgateError ? { status: error.status, code: error.code } : {};
    io.err.write(`${JSON.stringify({ error: message, ...details, exit_code: code })}\n`);
  } else {
    const status = error instanceof AgentgateError && error.status > 0 ? ` (HTTP ${error.status})` : '';
    io.err.write(`${colorsFor(io.err, flags.color !== false, io.env)('red', 'error:')} ${message}${status}\n`);
  }
  return code;
}

function buildProgram(io: Io, signal: AbortSignal, setExitCode: (code: number) => void): Command {
  const program = new Command('agentgate')
    .description('Command-line client of an agentgate gateway: submit tasks, watch agents work, manage sessions, approvals, schedules and keys.')
    .version('0.1.0')
    .option('--url <url>', 'gateway URL (env AGENTGATE_URL; default http://127.0.0.1:8080)')
    .option('--api-key <key>', 'API key (env AGENTGATE_API_KEY)')
    .option('--profile <name>', `profile in the config file (env AGENTGATE_PROFILE; file: ${configPath(io.env)})`)
    .option('--tenant <id>', 'tenant id (X-Tenant-ID)')
    .option('--json', 'print JSON (one object, or one event per line with --stream) for scripts')
    .option('--no-color', 'no colours (also NO_COLOR, or output that is not a terminal)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out.write(text), writeErr: (text) => io.err.write(text) });
  program.addHelpText('after', `
Exit codes: 0 ok, 1 task failed/cancelled/timed out, 2 usage error or request refused (400),
3 authentication or permission (401/403), 4 not found, 5 conflict (409), 6 server unreachable,
overloaded or failing, 130 interrupted.`);
  const context = createContext(program, io, signal, setExitCode);
  for (const add of [addSubmitCommand, addTaskCommands, addSessionCommands, addApprovalCommands, addScheduleCommands, addKeyCommands, addToolCommands, addProfileCommands]) {
    add(program, context);
  }
  return program;
}
