import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AgentgateClient } from '../client.ts';
import { AgentgateError } from '../errors.ts';
import { configPath, readConfig, resolveConnection, UsageError, writeConfig } from './config.ts';
import { colorsFor, shortStatus, table } from './output.ts';
import { followAndRender } from './render.ts';
import type { ApiKeyCreate } from '../types.ts';

type Scope = NonNullable<ApiKeyCreate['scopes']>[number];

/**
 * Exit codes (documented in packages/sdk/README.md): scripts branch on them.
 */
export const EXIT = {
  ok: 0,
  /** The task ended failed, cancelled or timed out; or an unexpected error. */
  failed: 1,
  /** Wrong flags or arguments, or the server refused the request as malformed (400). */
  usage: 2,
  /** No credential, a wrong one, or one without the right (401, 403). */
  auth: 3,
  /** No such task, session, schedule… (404). */
  notFound: 4,
  /** The resource's state does not allow it (409: pausing a finished task…). */
  conflict: 5,
  /** The server could not be reached, was overloaded or failed (connection error, 429, 5xx) after retries. */
  unavailable: 6,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export interface Io { out: NodeJS.WriteStream; err: NodeJS.WriteStream; env: NodeJS.ProcessEnv }

interface GlobalFlags { url?: string; apiKey?: string; profile?: string; tenant?: string; json?: boolean; color: boolean }

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
  const paint = colorsFor(io.err, flags.color !== false, io.env);
  const code = exitCodeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (flags.json) {
    const details = error instanceof AgentgateError ? { status: error.status, code: error.code } : {};
    io.err.write(`${JSON.stringify({ error: message, ...details, exit_code: code })}\n`);
  } else {
    const status = error instanceof AgentgateError && error.status > 0 ? ` (HTTP ${error.status})` : '';
    io.err.write(`${paint('red', 'error:')} ${message}${status}\n`);
  }
  return code;
}

function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (!(error instanceof AgentgateError)) return EXIT.failed;
  if (error.status === 0) return error.code === 'connection_failed' || error.code === 'stream_lost' ? EXIT.unavailable : EXIT.failed;
  if (error.status === 400 || error.status === 413 || error.status === 422) return EXIT.usage;
  if (error.status === 401 || error.status === 403) return EXIT.auth;
  if (error.status === 404 || error.status === 410) return EXIT.notFound;
  if (error.status === 409) return EXIT.conflict;
  if (error.status === 429 || error.status >= 500) return EXIT.unavailable;
  return EXIT.failed;
}

const integer = (name: string) => (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError(`${name} must be a whole number`);
  return number;
};

const jsonObject = (value: string) => {
  try {
    const parsed = JSON.parse(value) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch { /* refused below */ }
  throw new InvalidArgumentError('expected a JSON object, e.g. \'{"key": "value"}\'');
};

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

  const flags = () => program.opts<GlobalFlags>();
  const client = async () => {
    const connection = await resolveConnection({ url: flags().url, apiKey: flags().apiKey, profile: flags().profile, tenant: flags().tenant }, io.env);
    return new AgentgateClient({ baseUrl: connection.url, apiKey: connection.apiKey, tenantId: connection.tenantId });
  };
  /** Prints a result: JSON with --json, else the human form. */
  const print = (value: unknown, human: () => string) => io.out.write(`${flags().json ? JSON.stringify(value, null, 2) : human()}\n`);
  const pretty = (value: unknown) => JSON.stringify(value, null, 2);
  const paint = () => colorsFor(io.out, flags().color !== false, io.env);
  const sub = (parent: Command, name: string, description: string) => parent.command(name).description(description).exitOverride()
    .configureOutput({ writeOut: (text) => io.out.write(text), writeErr: (text) => io.err.write(text) });

  sub(program, 'submit', 'submit a task; with --stream, follow it live and print the answer')
    .argument('<query>', 'what to do')
    .addOption(new Option('--mode <mode>', 'execution mode').choices(['simple', 'standard', 'complex', 'supervisor']))
    .addOption(new Option('--strategy <strategy>', 'research strategy').choices(['quick', 'standard', 'deep', 'academic']))
    .option('--role <role>', 'role preset (context.role)')
    .option('--session <id>', 'session to continue (UUID or your own id)')
    .option('--budget <tokens>', 'token budget of the task', integer('--budget'))
    .option('--context <json>', 'more context keys, as a JSON object', jsonObject)
    .option('--stream', 'follow the task: live agent tree and streaming answer; exit code by its outcome')
    .option('--wait', 'wait for the end quietly, then print the answer; exit code by its outcome')
    .action(async (query: string, options: { mode?: 'simple'; strategy?: 'quick'; role?: string; session?: string; budget?: number; context?: Record<string, unknown>; stream?: boolean; wait?: boolean }) => {
      const api = await client();
      const context = { ...options.context, ...(options.role ? { role: options.role } : {}), ...(options.budget ? { token_budget: options.budget } : {}) };
      const submitted = await api.tasks.submit({
        query, ...(options.mode ? { mode: options.mode } : {}), ...(options.strategy ? { research_strategy: options.strategy } : {}),
        ...(options.session ? { session_id: options.session } : {}), ...(Object.keys(context).length ? { context } : {}),
      }, { signal });
      if (options.stream) {
        if (!flags().json) io.err.write(`task ${submitted.task_id} (session ${submitted.session_id})\n`);
        const { task } = await followAndRender(api, submitted.task_id, { out: io.out, err: io.err, json: flags().json === true, color: flags().color !== false, signal });
        setExitCode(task.status === 'TASK_STATUS_COMPLETED' ? EXIT.ok : EXIT.failed);
      } else if (options.wait) {
        const { task } = await api.tasks.wait(submitted.task_id, { signal });
        print(task, () => task.result || `task ${task.task_id} ${shortStatus(task.status)}${task.error ? `: ${task.error}` : ''}`);
        setExitCode(task.status === 'TASK_STATUS_COMPLETED' ? EXIT.ok : EXIT.failed);
      } else {
        print(submitted, () => `${submitted.task_id}\t(session ${submitted.session_id})`);
      }
    });

  const tasks = sub(program, 'tasks', 'list, inspect and control tasks');
  sub(tasks, 'ls', 'list tasks, newest first')
    .option('--status <status>', 'only this status (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT)')
    .option('--session <id>', 'only this session')
    .option('--limit <n>', 'how many (1-100)', integer('--limit'))
    .option('--offset <n>', 'skip this many', integer('--offset'))
    .action(async (options: { status?: string; session?: string; limit?: number; offset?: number }) => {
      const list = await (await client()).tasks.list({ status: options.status, session_id: options.session, limit: options.limit, offset: options.offset }, { signal });
      print(list, () => table(list.tasks.map((task) => ({ ...task, status: shortStatus(task.status) })), ['task_id', 'status', 'mode', 'created_at', 'query']));
    });
  sub(tasks, 'get', 'a task\'s status and result').argument('<id>')
    .action(async (id: string) => {
      const task = await (await client()).tasks.get(id, { signal });
      print(task, () => [
        `${paint()('bold', task.task_id)}  ${shortStatus(task.status)}  ${task.mode ?? ''}`,
        `query:   ${task.query}`, `session: ${task.session_id}`, ...(task.error ? [`error:   ${task.error}`] : []),
        ...(task.result ? ['', task.result] : []),
      ].join('\n'));
    });
  sub(tasks, 'events', 'a task\'s events; --follow streams them live until the task ends').argument('<id>')
    .option('--follow', 'stream new events as they happen (resumes on its own)')
    .option('--partial', 'include streamed text deltas in the history')
    .action(async (id: string, options: { follow?: boolean; partial?: boolean }) => {
      const api = await client();
      const events = options.follow ? api.tasks.stream(id, { signal }) : (await api.tasks.allEvents(id, { include_partial: options.partial === true }, { signal }));
      const collected = [];
      for await (const event of events) {
        if (flags().json) {
          if (options.follow) io.out.write(`${JSON.stringify(event)}\n`);
          else collected.push(event);
        } else {
          io.out.write(`${String(event.seq).padStart(4)}  ${event.timestamp}  ${event.type.padEnd(20)} ${event.agent_id ?? '-'}  ${(event.type === 'LLM_PARTIAL' ? event.delta : event.message ?? '')?.replace(/\s+/g, ' ').slice(0, 100)}\n`);
        }
      }
      if (flags().json && !options.follow) io.out.write(`${JSON.stringify(collected, null, 2)}\n`);
    });
  for (const action of ['cancel', 'pause', 'resume'] as const) {
    sub(tasks, action, `${action} a task`).argument('<id>').option('--reason <text>', 'why (recorded with the task)')
      .action(async (id: string, options: { reason?: string }) => {
        const answer = await (await client()).tasks[action](id, options.reason, { signal });
        print(answer, () => answer.message ?? `${action}: ok`);
      });
  }

  const sessions = sub(program, 'sessions', 'list and inspect sessions');
  sub(sessions, 'ls', 'list sessions').option('--limit <n>', 'how many', integer('--limit')).option('--offset <n>', 'skip this many', integer('--offset'))
    .action(async (options: { limit?: number; offset?: number }) => {
      const list = await (await client()).sessions.list({ limit: options.limit, offset: options.offset }, { signal });
      print(list, () => table(list.sessions, ['session_id', 'title', 'task_count', 'tokens_used', 'updated_at']));
    });
  sub(sessions, 'get', 'one session').argument('<id>')
    .action(async (id: string) => {
      const session = await (await client()).sessions.get(id, { signal });
      print(session, () => pretty(session));
    });
  sub(sessions, 'history', 'the tasks of a session, oldest first').argument('<id>').option('--limit <n>', 'how many', integer('--limit'))
    .action(async (id: string, options: { limit?: number }) => {
      const history = await (await client()).sessions.history(id, { limit: options.limit }, { signal });
      print(history, () => pretty(history));
    });
  sub(sessions, 'rename', 'set a session\'s title').argument('<id>').argument('<title>')
    .action(async (id: string, title: string) => {
      const session = await (await client()).sessions.rename(id, title, { signal });
      print(session, () => `renamed ${id}`);
    });
  sub(sessions, 'rm', 'delete a session').argument('<id>')
    .action(async (id: string) => {
      await (await client()).sessions.delete(id, { signal });
      print({ deleted: id }, () => `deleted ${id}`);
    });

  const approvals = sub(program, 'approvals', 'tool calls waiting for a person\'s decision');
  sub(approvals, 'ls', 'list approvals').option('--status <status>', 'pending (default), approved, denied, expired or all')
    .action(async (options: { status?: string }) => {
      const list = await (await client()).approvals.list({ ...(options.status ? { status: options.status as 'pending' } : {}) }, { signal });
      print(list, () => table(list.approvals, ['approval_id', 'workflow_id', 'status', 'tools', 'created_at']));
    });
  for (const decision of ['approve', 'deny'] as const) {
    sub(approvals, decision, `${decision} a pending tool call`).argument('<workflow-id>').argument('<approval-id>').option('--feedback <text>', 'a note for the agent')
      .action(async (workflowId: string, approvalId: string, options: { feedback?: string }) => {
        const answer = await (await client()).approvals[decision](workflowId, approvalId, options.feedback, { signal });
        print(answer, () => `${decision === 'approve' ? 'approved' : 'denied'} ${approvalId}`);
      });
  }

  const review = sub(program, 'review', 'the research-plan review of a task');
  sub(review, 'get', 'the current plan and rounds').argument('<task-id>')
    .action(async (taskId: string) => {
      const state = await (await client()).reviews.get(taskId, { signal });
      print(state, () => pretty(state));
    });
  sub(review, 'feedback', 'send feedback on the plan').argument('<task-id>').argument('<message>')
    .action(async (taskId: string, message: string) => {
      const answer = await (await client()).reviews.feedback(taskId, message, { signal });
      print(answer, () => pretty(answer));
    });
  sub(review, 'approve', 'approve the plan; the research starts').argument('<task-id>')
    .action(async (taskId: string) => {
      const answer = await (await client()).reviews.approve(taskId, { signal });
      print(answer, () => pretty(answer));
    });

  const schedules = sub(program, 'schedules', 'scheduled tasks');
  sub(schedules, 'ls', 'list schedules')
    .action(async () => {
      const list = await (await client()).schedules.list({}, { signal });
      print(list, () => table(list.schedules, ['schedule_id', 'name', 'cron_expression', 'status', 'next_run_at']));
    });
  sub(schedules, 'get', 'one schedule').argument('<id>')
    .action(async (id: string) => {
      const schedule = await (await client()).schedules.get(id, { signal });
      print(schedule, () => pretty(schedule));
    });
  sub(schedules, 'create', 'create a schedule')
    .requiredOption('--name <name>', 'its name').requiredOption('--cron <expression>', 'cron expression, e.g. "0 9 * * 1"')
    .requiredOption('--query <query>', 'the task to run').option('--timezone <tz>', 'IANA time zone (default UTC)')
    .action(async (options: { name: string; cron: string; query: string; timezone?: string }) => {
      const created = await (await client()).schedules.create({ name: options.name, cron_expression: options.cron, task_query: options.query, ...(options.timezone ? { timezone: options.timezone } : {}) }, { signal });
      print(created, () => pretty(created));
    });
  sub(schedules, 'runs', 'past runs of a schedule').argument('<id>')
    .action(async (id: string) => {
      const runs = await (await client()).schedules.runs(id, {}, { signal });
      print(runs, () => pretty(runs));
    });
  for (const action of ['pause', 'resume'] as const) {
    sub(schedules, action, `${action} a schedule`).argument('<id>')
      .action(async (id: string) => {
        const answer = await (await client()).schedules[action](id, undefined, { signal });
        print(answer, () => `${action}d ${id}`);
      });
  }
  sub(schedules, 'rm', 'delete a schedule').argument('<id>')
    .action(async (id: string) => {
      const answer = await (await client()).schedules.delete(id, { signal });
      print(answer, () => `deleted ${id}`);
    });

  const keys = sub(program, 'keys', 'API keys of the signed-in account');
  sub(keys, 'ls', 'list keys (never their secrets)')
    .action(async () => {
      const list = await (await client()).auth.keys.list({ signal });
      print(list, () => table(list.api_keys, ['id', 'name', 'prefix', 'scopes', 'last_used_at', 'expires_at']));
    });
  sub(keys, 'create', 'create a key; its secret is shown this once').requiredOption('--name <name>', 'what it is for')
    .option('--scopes <list>', 'comma-separated scopes (default: the server\'s)')
    .action(async (options: { name: string; scopes?: string }) => {
      const created = await (await client()).auth.keys.create({ name: options.name, ...(options.scopes ? { scopes: options.scopes.split(',').map((scope) => scope.trim()) as Scope[] } : {}) }, { signal });
      print(created, () => pretty(created));
    });
  sub(keys, 'rotate', 'replace a key\'s secret').argument('<id>')
    .action(async (id: string) => {
      const rotated = await (await client()).auth.keys.rotate(id, { signal });
      print(rotated, () => pretty(rotated));
    });
  sub(keys, 'revoke', 'revoke a key').argument('<id>')
    .action(async (id: string) => {
      const answer = await (await client()).auth.keys.revoke(id, { signal });
      print(answer, () => `revoked ${id}`);
    });

  const tools = sub(program, 'tools', 'the tool catalogue');
  sub(tools, 'ls', 'list tools').option('--category <name>', 'only this category')
    .action(async (options: { category?: string }) => {
      const list = await (await client()).tools.list({ ...(options.category ? { category: options.category } : {}) }, { signal });
      print(list, () => table(list.tools, ['name', 'category', 'description']));
    });
  sub(tools, 'get', 'one tool and its parameters').argument('<name>')
    .action(async (name: string) => {
      const tool = await (await client()).tools.get(name, { signal });
      print(tool, () => pretty(tool));
    });
  sub(tools, 'run', 'run a tool directly').argument('<name>').option('--args <json>', 'its arguments, a JSON object', jsonObject)
    .action(async (name: string, options: { args?: Record<string, unknown> }) => {
      const result = await (await client()).tools.execute(name, { arguments: options.args ?? {} }, { signal });
      print(result, () => pretty(result));
    });

  sub(program, 'health', 'the gateway\'s liveness and readiness')
    .action(async () => {
      const api = await client();
      const [health, readiness] = await Promise.all([api.probes.health({ signal }), api.probes.readiness({ signal })]);
      print({ health, readiness }, () => `health: ${pretty(health)}\nreadiness: ${pretty(readiness)}`);
    });

  const profiles = sub(program, 'profile', `named connections in ${configPath(io.env)}`);
  sub(profiles, 'set', 'add or change a profile').argument('<name>')
    .option('--set-url <url>', 'its gateway URL').option('--set-api-key <key>', 'its API key').option('--default', 'use it when no --profile is given')
    .action(async (name: string, options: { setUrl?: string; setApiKey?: string; default?: boolean }) => {
      const file = configPath(io.env);
      const config = await readConfig(file);
      const profile = { ...config.profiles?.[name], ...(options.setUrl ? { url: options.setUrl } : {}), ...(options.setApiKey ? { api_key: options.setApiKey } : {}) };
      await writeConfig(file, { ...config, ...(options.default ? { default_profile: name } : {}), profiles: { ...config.profiles, [name]: profile } });
      print({ profile: name, file }, () => `saved profile ${name} in ${file}`);
    });
  sub(profiles, 'ls', 'list profiles (keys hidden)')
    .action(async () => {
      const config = await readConfig(configPath(io.env));
      const rows = Object.entries(config.profiles ?? {}).map(([name, profile]) => ({
        name: name === config.default_profile ? `${name} (default)` : name, url: profile.url, api_key: profile.api_key ? `${profile.api_key.slice(0, 8)}…` : undefined,
      }));
      print(rows, () => table(rows, ['name', 'url', 'api_key']));
    });
  return program;
}
