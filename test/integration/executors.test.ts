import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { createTestDatabase, runRefused, startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

async function executorIdsOfTasks(gateway: Gateway, taskIds: string[]): Promise<string[]> {
  const { rows } = await gateway.sql.query('select distinct executor_id from dbos.workflow_status where workflow_uuid = any($1) order by 1', [taskIds]);
  return rows.map((row) => row.executor_id);
}

test('two processes left at their defaults get distinct identities; a third asking for a live one\'s identity refuses to start, saying why', async (t) => {
  const first = await startGateway(t);
  const second = await startGateway(t, { databaseUrl: first.databaseUrl });
  const { rows } = await first.sql.query('select id, hostname, pid from executors order by id');
  const host = os.hostname().replace(/[^A-Za-z0-9_.-]/g, '-');
  assert.deepEqual(rows.map((row) => row.id), [`${host}-1`, `${host}-2`]);
  assert.notEqual(rows[0].pid, rows[1].pid);
  // Each runs the tasks it takes under its own identity.
  const [a, b] = await Promise.all([first, second].map((gateway) => gateway.request('POST', '/api/v1/tasks', { query: 'whose am I?' })));
  await Promise.all([waitForTask(first, a.body.task_id), waitForTask(second, b.body.task_id)]);
  assert.deepEqual(await executorIdsOfTasks(first, [a.body.task_id, b.body.task_id]), [`${host}-1`, `${host}-2`]);

  const refused = await runRefused(first.databaseUrl, { EXECUTOR_ID: `${host}-1` });
  assert.equal(refused.code, 1, refused.output);
  assert.match(refused.output, new RegExp(`EXECUTOR_ID ${host}-1 is held by a live process \\(pid ${rows[0].pid} on ${os.hostname()}, last heartbeat \\d+ s ago\\)`));
  assert.equal((await first.request('GET', '/readiness')).status, 200, 'the holder runs on undisturbed');
});

test('a process restarted after kill -9 gets its identity back at once and finishes its own tasks', async (t) => {
  const gateway = await startGateway(t);
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'survive me', context: { mock_delay_ms: 5_000 } });
  await waitFor('the task to start', async () => ((await gateway.request('GET', `/api/v1/tasks/${submitted.body.task_id}`)).body.status === 'TASK_STATUS_RUNNING' ? true : undefined));
  const { rows: [before] } = await gateway.sql.query('select id from executors');
  await gateway.kill('SIGKILL');
  await gateway.restart();
  const { rows } = await gateway.sql.query('select id, stopped_at, recovered_at from executors');
  assert.deepEqual(rows, [{ id: before.id, stopped_at: null, recovered_at: null }], 'the same identity, claimed again');
  assert.equal((await waitForTask(gateway, submitted.body.task_id, 30_000)).status, 'TASK_STATUS_COMPLETED');
});

// Before issue 17 both processes were executor `local`: the restarted one recovered the other's running
// workflows, the model was called twice, and the displaced run marked the task FAILED and ended its stream
// (ERROR_OCCURRED, STREAM_END) before the new owner wrote the answer after it.
test('two processes at their defaults, one restarted while the other runs planned tasks: each task runs once and ends once', async (t) => {
  const first = await startGateway(t);
  const second = await startGateway(t, { databaseUrl: first.databaseUrl });
  const plan = { complexity_score: 0.7, execution_strategy: 'sequential', subtasks: [{ id: 'a', description: 'first' }, { id: 'b', description: 'second' }] };
  const submitted = await Promise.all(Array.from({ length: 6 }, (_, index) =>
    first.request('POST', '/api/v1/tasks', { query: `long ${index}`, mode: 'standard', context: { mock_delay_ms: 1_500, mock_plan: plan } })));
  const taskIds = submitted.map((answer) => answer.body.task_id as string);
  await waitFor('the agents to start', async () => {
    const { rows } = await first.sql.query(`select count(distinct task_id)::int as count from task_events where task_id = any($1) and type = 'AGENT_STARTED'`, [taskIds]);
    return rows[0].count === taskIds.length ? true : undefined;
  });
  await second.kill('SIGKILL');
  await second.restart();
  for (const taskId of taskIds) assert.equal((await waitForTask(first, taskId, 30_000)).status, 'TASK_STATUS_COMPLETED');
  const { rows } = await first.sql.query(`
    select t.id,
      (select count(*)::int from task_events e where e.task_id = t.id and e.type = 'ERROR_OCCURRED') as errors,
      (select count(*)::int from task_events e where e.task_id = t.id and e.type = 'STREAM_END') as ends,
      (select max(e.seq) from task_events e where e.task_id = t.id and e.type = 'STREAM_END') as end_seq,
      (select max(e.seq) from task_events e where e.task_id = t.id) as last_seq
    from tasks t where t.id = any($1)`, [taskIds]);
  for (const row of rows) assert.deepEqual([row.errors, row.ends, row.end_seq], [0, 1, row.last_seq], `task ${row.id}: no error, one end, last`);
  // Decomposition, two agents and the synthesis: four model calls per task, in either process.
  const calls = await Promise.all([first, second].map(async (gateway) => {
    const metrics = (await gateway.request('GET', '/metrics')).text;
    return [...metrics.matchAll(/^agentgate_model_calls_total\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
  }));
  assert.equal(calls[0] + calls[1], taskIds.length * 4, `model calls: ${calls.join(' + ')}`);
});

// Before: the engine migrated its schema at launch with no lock, and one of two processes started together on a
// fresh database failed with "deadlock detected" or "tuple concurrently updated".
test('a gateway and a worker started together on a fresh database both start, and the worker runs the gateway\'s task', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const [gateway] = await Promise.all([
    startGateway(t, { databaseUrl, args: ['--role', 'gateway'] }),
    startGateway(t, { databaseUrl, args: ['--role', 'worker'], env: { EXECUTOR_ID: 'fresh-worker' } }),
  ]);
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'run me elsewhere', mode: 'simple' });
  assert.equal((await waitForTask(gateway, submitted.body.task_id)).status, 'TASK_STATUS_COMPLETED');
  assert.deepEqual(await executorIdsOfTasks(gateway, [submitted.body.task_id]), ['fresh-worker']);
});

test('a queue claim by an executor that was taken over or stopped is refused, so a live worker takes the workflow', async (t) => {
  const gateway = await startGateway(t, { args: ['--role', 'gateway'] });
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: 'waits on the queue: no worker here' });
  assert.equal(answer.status, 200, answer.text);
  const taskId = answer.body.task_id as string;
  await waitFor('the task to wait on the queue', async () =>
    (await gateway.sql.query(`select 1 from dbos.workflow_status where workflow_uuid = $1 and status = 'ENQUEUED'`, [taskId])).rows.length > 0 || undefined);
  await gateway.sql.query(`insert into executors (id, hostname, pid, role, recovered_at, recovered_by) values ('taken-over', 'elsewhere', 1, 'worker', now(), 'other')`);
  await gateway.sql.query(`insert into executors (id, hostname, pid, role, stopped_at) values ('stopped', 'elsewhere', 2, 'worker', now())`);
  await gateway.sql.query(`insert into executors (id, hostname, pid, role) values ('alive', 'elsewhere', 3, 'worker')`);
  // The engine's claim: the row flipped to PENDING under the claiming executor, which RETURNING reports.
  const claim = async (executorId: string) => (await gateway.sql.query(
    `update dbos.workflow_status set status = 'PENDING', executor_id = $2 where workflow_uuid = $1 and status = 'ENQUEUED' returning workflow_uuid`,
    [taskId, executorId])).rows.length;
  assert.equal(await claim('taken-over'), 0, 'an executor taken over claims nothing');
  assert.equal(await claim('stopped'), 0, 'a stopped executor claims nothing');
  assert.equal(await claim('alive'), 1, 'a live executor claims the workflow');
});
