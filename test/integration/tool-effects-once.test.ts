import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { stdioTestServerLines } from '../fixtures/mcp-test-config.ts';

const env = { DEFAULT_TASK_MODE: 'auto' };

async function submit(gateway: Gateway, session: string, toolCalls: unknown[]): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: 'Work with the files.', session_id: session, context: { role: 'developer', mock_tool_calls: toolCalls } });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id;
}

async function runToCompletion(gateway: Gateway, session: string, toolCalls: unknown[]): Promise<void> {
  const task = await waitForTask(gateway, await submit(gateway, session, toolCalls), 30_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
}

async function fileText(gateway: Gateway, session: string, path: string): Promise<string | undefined> {
  const { rows } = await gateway.sql.query(`select convert_from(f.content, 'UTF8') as text from session_files f join sessions s on s.id = f.session_id
    where s.external_id = $1 and f.path = $2`, [session, path]);
  return rows[0]?.text;
}

/** What each task's calls were recorded as (the outcome a re-run replays), in call order. */
async function recordedCalls(gateway: Gateway, taskId: string): Promise<Array<{ tool: string; output: any; error: string | null }>> {
  const { rows } = await gateway.sql.query('select tool, output, error from tool_calls where task_id = $1 order by created_at, call_key', [taskId]);
  return rows;
}

/**
 * Holds an EXCLUSIVE lock on tool_calls: reads go on, but no call can be recorded. Before the fix, a workspace change
 * committed on its own and its call's row waited here for the next commit, so a kill -9 lost the row and the
 * re-run after the restart made the change again (`A0,A0,B0`).
 */
async function holdToolCalls(databaseUrl: string): Promise<{ waiting(): Promise<number>; release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query('begin');
  await holder.query('lock table tool_calls in exclusive mode');
  return {
    async waiting() {
      const { rows } = await holder.query(`select count(*)::int as count from pg_locks where relation = 'tool_calls'::regclass and not granted`);
      return rows[0].count;
    },
    async release() {
      await holder.query('rollback');
      await holder.end();
    },
  };
}

test('kill -9 while workspace changes cannot record their calls: after the restart file_write, file_edit and file_delete each took effect once, and each call is recorded once with its first outcome', { timeout: 180_000 }, async (t) => {
  const gateway = await startGateway(t, { env });
  await runToCompletion(gateway, 'edit-once', [{ tool: 'file_write', args: { path: 'notes.md', content: 'edits:\n' } }]);
  await runToCompletion(gateway, 'delete-once', [{ tool: 'file_write', args: { path: 'gone.txt', content: 'bye\n' } }]);

  const lock = await holdToolCalls(gateway.databaseUrl);
  const appendOf = (content: string) => ({ tool: 'file_write', args: { path: 'log.txt', content, append: true } });
  const tasks = {
    write: await submit(gateway, 'write-once', [appendOf('A0\n'), appendOf('B0\n')]),
    edit: await submit(gateway, 'edit-once', [{ tool: 'file_edit', args: { path: 'notes.md', old_text: 'edits:', new_text: 'edits: e' } }]),
    delete: await submit(gateway, 'delete-once', [{ tool: 'file_delete', args: { path: 'gone.txt' } }]),
  };
  await waitFor('each task to wait to record a call', async () => (await lock.waiting() >= 3 ? true : undefined), 30_000);
  await gateway.kill('SIGKILL');
  await lock.release();
  await gateway.restart();

  for (const taskId of Object.values(tasks)) assert.equal((await waitForTask(gateway, taskId, 60_000)).status, 'TASK_STATUS_COMPLETED');
  assert.equal(await fileText(gateway, 'write-once', 'log.txt'), 'A0\nB0\n', 'each append once');
  assert.equal(await fileText(gateway, 'edit-once', 'notes.md'), 'edits: e\n', 'the edit once');
  assert.equal(await fileText(gateway, 'delete-once', 'gone.txt'), undefined);

  const [firstAppend, secondAppend] = await recordedCalls(gateway, tasks.write);
  assert.deepEqual([firstAppend.output.size, secondAppend.output.size], [3, 6]);
  const [edit] = await recordedCalls(gateway, tasks.edit);
  assert.deepEqual([edit.error, edit.output.line], [null, 1]);
  const [deletion] = await recordedCalls(gateway, tasks.delete);
  assert.deepEqual([deletion.error, deletion.output], [null, { path: 'gone.txt', deleted: true }], 'the delete is recorded as done, not as "no such file" from a second run');
  const { rows: observations } = await gateway.sql.query(`select task_id, count(*)::int as count from task_events
    where task_id = any($1) and type = 'TOOL_OBSERVATION' group by task_id`, [Object.values(tasks)]);
  assert.deepEqual(Object.fromEntries(observations.map((row) => [row.task_id, row.count])), { [tasks.write]: 2, [tasks.edit]: 1, [tasks.delete]: 1 });
});

/** An MCP server over stdio (a child of the gateway) whose tools declare no hints: each call runs at most once. */
async function mcpConfig(t: { after(fn: () => Promise<void>): void }): Promise<{ configFile: string; calls(): Promise<string[]> }> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'agentgate-at-most-once-'));
  t.after(() => rm(directory, { recursive: true, force: true }));
  const configFile = path.join(directory, 'mcp.yaml');
  const callLog = path.join(directory, 'calls.log');
  await writeFile(configFile, [
    'servers:',
    ...stdioTestServerLines({ env: { MCP_TEST_CALL_LOG: callLog }, timeoutMs: 60_000 }),
  ].join('\n'));
  return { configFile, calls: async () => (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter(Boolean) };
}

test('kill -9 during an MCP call with effects outside the gateway: after the restart the call is not made again, and the agent is told its outcome is unknown', { timeout: 120_000 }, async (t) => {
  const mcp = await mcpConfig(t);
  const gateway = await startGateway(t, { env: { ...env, MCP_CONFIG: mcp.configFile } });
  const run = (tool: string, args: Record<string, unknown>) => gateway.request('POST', '/api/v1/tasks',
    { query: `call ${tool}`, context: { role: 'generalist', mock_tool_calls: [{ tool, args }] } }).then((answer) => answer.body.task_id as string);
  const observationOf = async (taskId: string) => (await gateway.sql.query(
    `select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'`, [taskId])).rows.map((row) => row.payload);

  // Uninterrupted, a call runs once and answers (its claim does not stop it).
  const echoed = await waitFor('the MCP server to offer its tools', async () => {
    const taskId = await run('testsrv__echo', { text: 'once' });
    await waitForTask(gateway, taskId, 30_000);
    const [observed] = await observationOf(taskId);
    return observed?.output === 'echo: once' ? taskId : undefined;
  }, 40_000);
  assert.deepEqual(await mcp.calls(), ['echo']);
  assert.equal((await observationOf(echoed)).length, 1);

  const taskId = await run('testsrv__wait', { ms: 30_000 });
  await waitFor('the call to reach the MCP server', async () => ((await mcp.calls()).includes('wait') ? true : undefined), 30_000);
  await gateway.kill('SIGKILL');
  await gateway.restart();

  const task = await waitForTask(gateway, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.deepEqual(await mcp.calls(), ['echo', 'wait'], 'the interrupted call was not made a second time');
  const [observation] = await observationOf(taskId);
  assert.match(observation.error, /^outcome unknown: the worker running this call stopped before it recorded what the call did/);
  const { rows: [recorded] } = await gateway.sql.query('select error from tool_calls where task_id = $1', [taskId]);
  assert.equal(recorded.error, observation.error);
});

/**
 * Holds the engine's record of the named step (its `operation_outputs` row) until released, so that a kill -9 falls
 * after the step's effects committed and before the engine knows the step ran: its re-run is what is tested.
 */
async function holdStepRecord(databaseUrl: string, stepName: string): Promise<{ waiting(): Promise<boolean>; release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query(`
    create function hold_step_record() returns trigger language plpgsql as $$
    begin
      if new.function_name = ${pg.escapeLiteral(stepName)} then perform pg_advisory_xact_lock(4242); end if;
      return new;
    end $$;
    create trigger hold_step_record before insert on dbos.operation_outputs for each row execute function hold_step_record()`);
  await holder.query('select pg_advisory_lock(4242)');
  return {
    async waiting() {
      const { rows } = await holder.query(`select count(*)::int as count from pg_locks where locktype = 'advisory' and objid = 4242 and not granted`);
      return rows[0].count > 0;
    },
    async release() {
      await holder.query('select pg_advisory_unlock(4242)');
      await holder.query('drop trigger hold_step_record on dbos.operation_outputs; drop function hold_step_record()');
      await holder.end();
    },
  };
}

test('kill -9 after a template\'s tool node wrote to the workspace, before the engine recorded its step: after the restart the write took effect once', { timeout: 120_000 }, async (t) => {
  const templatesDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-template-once-'));
  t.after(() => rm(templatesDir, { recursive: true, force: true }));
  await writeFile(path.join(templatesDir, 'append-once.yaml'), [
    'name: append-once',
    'version: "1.0.0"',
    'description: Appends one line to a workspace file.',
    'nodes:',
    '  - id: append',
    '    kind: tool',
    '    tool: file_write',
    '    args: { path: log.txt, content: "A0\\n", append: true }',
  ].join('\n'));
  const gateway = await startGateway(t, { env: { ...env, TEMPLATES_DIR: templatesDir } });
  const hold = await holdStepRecord(gateway.databaseUrl, 'template-node:append');
  const submitted = await gateway.request('POST', '/api/v1/tasks',
    { query: 'Append a line.', session_id: 'template-once', context: { template: 'append-once', disable_ai: true } });
  assert.equal(submitted.status, 200, submitted.text);
  await waitFor('the write to commit and its step record to wait', async () =>
    (await fileText(gateway, 'template-once', 'log.txt')) === 'A0\n' && await hold.waiting() ? true : undefined, 30_000);
  await gateway.kill('SIGKILL');
  await hold.release();
  await gateway.restart();

  const task = await waitForTask(gateway, submitted.body.task_id, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(await fileText(gateway, 'template-once', 'log.txt'), 'A0\n', 'the node\'s write once');
  const calls = await recordedCalls(gateway, submitted.body.task_id);
  assert.deepEqual(calls.map((call) => [call.tool, call.error, call.output?.size]), [['file_write', null, 3]]);
});
