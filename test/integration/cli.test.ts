import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { registerAccount, type Account } from '../helpers/accounts.ts';
import { childEnv } from '../helpers/child-env.ts';
import { useGateway, waitFor } from '../helpers/gateway.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'packages/sdk/bin/agentgate.mjs');
const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[/;
// eslint-disable-next-line no-control-regex
const COLOUR = /\u001b\[[0-9;]*m/;
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

/** Three agents (two in parallel, one after both) whose answers stream for a moment. */
const threeAgents = JSON.stringify({
  mock_delay_ms: 300,
  mock_plan: {
    complexity_score: 0.7, execution_strategy: 'parallel', subtasks: [
      { id: 'north', description: 'Describe the north' }, { id: 'south', description: 'Describe the south' },
      { id: 'compare', description: 'Compare them', dependencies: ['north', 'south'] },
    ],
  },
});

/** util-linux `script` gives the command a real pseudo-terminal (Debian's bsdutils, always installed there). */
const noTerminal = spawnSync('script', ['--version']).status === 0 ? false : 'util-linux `script` is not installed: no pseudo-terminal to test in';

interface Run { code: number | null; stdout: string; stderr: string }

/** Runs the bin with this Node, piped (stdout and stderr are not terminals). */
async function agentgate(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...childEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const [code] = await once(child, 'exit') as [number | null];
  return { code, stdout, stderr };
}

/** Runs the bin in a real pseudo-terminal (util-linux `script`): what a person at a terminal sees. */
async function agentgateInTerminal(args: string[], env: Record<string, string>): Promise<Run> {
  const quoted = [process.execPath, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  const { stdout, stderr } = await promisify(execFile)('script', ['-qefc', `stty cols 120 rows 40; ${quoted}`, '/dev/null'], {
    cwd: ROOT, env: { ...childEnv(), TERM: 'xterm-256color', ...env }, maxBuffer: 10_000_000,
  }).catch((error: { code: number; stdout: string; stderr: string }) => ({ ...error }));
  return { code: 0, stdout, stderr };
}

describe('the agentgate command line', () => {
  const gateway = useGateway({ env: authEnv });
  let account: Account;
  const as = () => ({ AGENTGATE_URL: gateway().url, AGENTGATE_API_KEY: account.apiKey });
  before(async () => { account = await registerAccount(gateway(), 'cli'); });

  test('submit --stream (piped): each agent finishing on stderr, the answer on stdout, exit 0, no escape codes', async () => {
    const run = await agentgate(['submit', 'Compare the north and the south', '--mode', 'standard', '--context', threeAgents, '--stream'], as());
    assert.equal(run.code, 0, run.stderr);
    for (const agent of ['north', 'south', 'compare']) assert.match(run.stderr, new RegExp(`✓ agent ${agent} finished`), run.stderr);
    const taskId = /task ([0-9a-f-]{36}) \(session/.exec(run.stderr)?.[1];
    assert.ok(taskId, run.stderr);
    const task = (await gateway().request('GET', `/api/v1/tasks/${taskId}`, undefined, { 'x-api-key': account.apiKey })).body;
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.equal(run.stdout, `${task.result}\n`, 'stdout is the answer alone');
    assert.doesNotMatch(run.stdout + run.stderr, ANSI, 'no escape codes when not a terminal');
    assert.doesNotMatch(run.stderr, SPINNER, 'no spinner when not a terminal');
  });

  test('in a real terminal: a live tree with colours, each agent finishing, and the answer; NO_COLOR turns colours off', { skip: noTerminal }, async () => {
    const run = await agentgateInTerminal(['submit', 'Compare the north and the south', '--mode', 'standard', '--context', threeAgents, '--stream'], as());
    assert.match(run.stdout, COLOUR, 'coloured on a terminal');
    assert.match(run.stdout, /\u001b\[\?25l/, 'the cursor is hidden while the tree is redrawn');
    assert.match(run.stdout, SPINNER, 'a spinner while agents work');
    for (const agent of ['north', 'south', 'compare']) assert.match(run.stdout, new RegExp(`✓\\S* \\S*${agent}`));
    assert.match(run.stdout, /task completed/);
    assert.match(run.stdout, /Mock answer/);
    const plain = await agentgateInTerminal(['tasks', 'ls'], { ...as(), NO_COLOR: '1' });
    assert.doesNotMatch(plain.stdout, COLOUR);
    assert.match(plain.stdout, /TASK_ID\s+STATUS/);
  });

  test('--json output parses: submit, submit --stream (one event a line), tasks ls, tasks get', async () => {
    const submitted = await agentgate(['--json', 'submit', 'json please', '--wait'], as());
    assert.equal(submitted.code, 0, submitted.stderr);
    const task = JSON.parse(submitted.stdout);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');

    const streamed = await agentgate(['submit', 'json stream', '--stream', '--json'], as());
    assert.equal(streamed.code, 0, streamed.stderr);
    const lines = streamed.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(lines.at(-1).type, 'TASK_STATUS');
    assert.equal(lines.at(-1).task.status, 'TASK_STATUS_COMPLETED');
    assert.deepEqual(lines.slice(0, -1).map((event) => event.seq), lines.slice(0, -1).map((_, index) => index + 1));

    const list = JSON.parse((await agentgate(['tasks', 'ls', '--json'], as())).stdout);
    assert.ok(list.tasks.some((listed: { task_id: string }) => listed.task_id === task.task_id));
    const got = JSON.parse((await agentgate(['--json', 'tasks', 'get', task.task_id], as())).stdout);
    assert.equal(got.result, task.result);
  });

  test('exit codes: a bad key 3 with the server\'s message, unknown task 4, finished task paused 5, usage 2, refused input 2', async () => {
    const badKey = await agentgate(['tasks', 'ls'], { ...as(), AGENTGATE_API_KEY: 'sk_test_wrong' });
    assert.equal(badKey.code, 3);
    assert.match(badKey.stderr, /Invalid API key \(HTTP 401\)/);
    const badKeyJson = await agentgate(['tasks', 'ls', '--json'], { ...as(), AGENTGATE_API_KEY: 'sk_test_wrong' });
    assert.deepEqual(JSON.parse(badKeyJson.stderr), { error: 'Invalid API key', status: 401, code: 'unauthorized', exit_code: 3 });

    const missing = await agentgate(['tasks', 'get', '00000000-0000-4000-8000-000000000000'], as());
    assert.equal(missing.code, 4, missing.stderr);
    const done = JSON.parse((await agentgate(['--json', 'submit', 'finish first', '--wait'], as())).stdout);
    const paused = await agentgate(['tasks', 'pause', done.task_id], as());
    assert.equal(paused.code, 5, paused.stderr);
    assert.match(paused.stderr, /cannot pause completed task/);
    assert.equal((await agentgate(['submit'], as())).code, 2);
    assert.equal((await agentgate(['tasks', 'frobnicate'], as())).code, 2);
    assert.equal((await agentgate(['submit', 'x', '--budget', 'lots'], as())).code, 2);
    const refused = await agentgate(['submit', 'x', '--session', 'not a valid id!'], as());
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /session_id/);
  });

  test('tasks events lists the history or follows it live (--json parses); Ctrl-C during --stream exits 130', async () => {
    const done = JSON.parse((await agentgate(['--json', 'submit', 'history please', '--wait'], as())).stdout);
    const history = JSON.parse((await agentgate(['--json', 'tasks', 'events', done.task_id], as())).stdout);
    assert.equal(history[0].type, 'WORKFLOW_STARTED');
    const followed = (await agentgate(['--json', 'tasks', 'events', done.task_id, '--follow'], as())).stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(followed.at(-1).type, 'WORKFLOW_COMPLETED');
    const plain = await agentgate(['tasks', 'events', done.task_id], as());
    assert.match(plain.stdout, /^\s+1 {2}\S+ {2}WORKFLOW_STARTED/m);
    const withDeltas = await agentgate(['tasks', 'events', done.task_id, '--partial'], as());
    const deltaLines = withDeltas.stdout.split('\n').filter((line) => / LLM_PARTIAL /.test(line));
    assert.ok(deltaLines.length > 0, withDeltas.stdout);
    for (const line of deltaLines) assert.match(line, /LLM_PARTIAL\s+\S+ {2}\S/, `a history delta shows its text: ${line}`);
    assert.doesNotMatch(withDeltas.stdout, /undefined/);

    const child = spawn(process.execPath, [BIN, 'submit', 'slow one', '--stream', '--context', '{"mock_delay_ms": 20000}'], { cwd: ROOT, env: { ...childEnv(), ...as() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    await waitFor('the first agent to start', async () => (/agent \S+ started/.test(stderr) ? true : undefined));
    child.kill('SIGINT');
    const [code] = await once(child, 'exit') as [number | null];
    assert.equal(code, 130, stderr);
    const taskId = /task ([0-9a-f-]{36})/.exec(stderr)![1];
    await agentgate(['tasks', 'cancel', taskId], as());
  });

  test('a task that fails exits 1', async () => {
    const cycle = JSON.stringify({ mock_plan: { complexity_score: 0.7, subtasks: [{ id: 'x', description: 'x', dependencies: ['y'] }, { id: 'y', description: 'y', dependencies: ['x'] }] } });
    const run = await agentgate(['submit', 'go round', '--mode', 'standard', '--context', cycle, '--stream'], as());
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /failed/);
  });

  test('the server and key come from flags over the environment over a named profile (XDG_CONFIG_HOME)', async (t) => {
    const home = await mkdtemp(path.join(tmpdir(), 'agentgate-cli-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const env = { XDG_CONFIG_HOME: home };
    const saved = await agentgate(['profile', 'set', 'work', '--set-url', gateway().url, '--set-api-key', account.apiKey, '--default'], env);
    assert.equal(saved.code, 0, saved.stderr);
    const file = path.join(home, 'agentgate', 'config.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600, 'the file holding keys is private');
    assert.equal(JSON.parse(await readFile(file, 'utf8')).profiles.work.url, gateway().url);
    assert.equal((await agentgate(['tasks', 'ls'], env)).code, 0, 'the default profile');
    assert.equal((await agentgate(['tasks', 'ls'], { ...env, AGENTGATE_API_KEY: 'sk_test_wrong' })).code, 3, 'the environment over the profile');
    assert.equal((await agentgate(['--api-key', account.apiKey, 'tasks', 'ls'], { ...env, AGENTGATE_API_KEY: 'sk_test_wrong' })).code, 0, 'a flag over the environment');
    assert.equal((await agentgate(['--profile', 'nope', 'tasks', 'ls'], env)).code, 2, 'an unknown profile is a usage error');
    await writeFile(file, '{ not json');
    assert.equal((await agentgate(['tasks', 'ls'], env)).code, 2);
  });

  test('the other command groups answer: sessions, approvals, review, schedules, keys, tools, health', async () => {
    const env = as();
    const session = JSON.parse((await agentgate(['--json', 'submit', 'in a session', '--session', 'cli-session-1', '--wait'], env)).stdout);
    assert.equal(session.status, 'TASK_STATUS_COMPLETED');
    const sessions = JSON.parse((await agentgate(['--json', 'sessions', 'ls'], env)).stdout);
    assert.ok(sessions.sessions.length >= 1);
    assert.equal((await agentgate(['sessions', 'get', 'cli-session-1'], env)).code, 0);
    assert.equal((await agentgate(['--json', 'approvals', 'ls'], env)).code, 0);
    assert.equal((await agentgate(['review', 'get', session.task_id], env)).code, 4, 'no review for a plain task');
    const created = await agentgate(['--json', 'schedules', 'create', '--name', 'daily', '--cron', '0 9 * * *', '--query', 'morning news'], env);
    assert.equal(created.code, 0, created.stderr);
    const schedules = JSON.parse((await agentgate(['--json', 'schedules', 'ls'], env)).stdout);
    assert.equal(schedules.schedules.length, 1);
    const created_key = JSON.parse((await agentgate(['--json', 'keys', 'create', '--name', 'ci', '--scopes', 'tasks:read'], env)).stdout);
    assert.match(created_key.key, /^sk_/);
    const keys = JSON.parse((await agentgate(['--json', 'keys', 'ls'], env)).stdout);
    assert.ok(keys.api_keys.some((key: { id: string }) => key.id === created_key.id));
    assert.equal((await agentgate(['keys', 'revoke', created_key.id], env)).code, 0);
    assert.equal((await agentgate(['tasks', 'ls'], { ...env, AGENTGATE_API_KEY: created_key.key })).code, 3, 'the revoked key is refused');
    const ran = JSON.parse((await agentgate(['--json', 'tools', 'run', 'calculator', '--args', '{"expression": "6 * 7"}'], env)).stdout);
    assert.match(JSON.stringify(ran), /42/);
    const tools = JSON.parse((await agentgate(['--json', 'tools', 'ls'], env)).stdout);
    assert.ok(tools.tools.some((tool: { name: string }) => tool.name === 'calculator'));
    const health = await agentgate(['health', '--json'], env);
    assert.equal(JSON.parse(health.stdout).readiness.status, 'ready');
  });
});
