import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startGateway, waitFor, type Gateway } from '../helpers/gateway.ts';

// A process at rest holds far more than 64 MiB, so this one is over its limit from the start.
const OVER_LIMIT = { WORKER_MEMORY_LIMIT_MB: '64', EXECUTOR_ID: 'over-limit' };
const TASKS = 4;
const HELD_MS = 3_000;

async function tasksByStatus(gateway: Gateway, taskIds: string[]): Promise<Record<string, number>> {
  const { rows } = await gateway.sql.query(`select status, count(*)::int as count from tasks where id = any($1) group by status`, [taskIds]);
  return Object.fromEntries(rows.map((row) => [row.status, row.count]));
}

test('a process over WORKER_MEMORY_LIMIT_MB starts no task; the tasks wait in the queue and a worker with room runs them', async (t) => {
  const full = await startGateway(t, { env: OVER_LIMIT });
  const answers = await Promise.all(Array.from({ length: TASKS }, (_, index) =>
    full.request('POST', '/api/v1/tasks', { query: `held ${index}`, mode: 'simple' })));
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  const taskIds = answers.map((answer) => answer.body.task_id as string);

  // Submissions are accepted and kept: neither started on arrival nor taken from the queue while memory is over.
  await sleep(HELD_MS);
  assert.deepEqual(await tasksByStatus(full, taskIds), { QUEUED: TASKS });
  const { rows: engine } = await full.sql.query(`select status, executor_id from dbos.workflow_status where workflow_uuid = any($1)`, [taskIds]);
  assert.equal(engine.length, TASKS);
  for (const row of engine) assert.equal(row.status, 'ENQUEUED', `workflow ${JSON.stringify(row)}`);

  const worker = await startGateway(t, { databaseUrl: full.databaseUrl, env: { EXECUTOR_ID: 'with-room' }, args: ['--role', 'worker'] });
  await waitFor('the worker with room to complete every task', async () => ((await tasksByStatus(worker, taskIds)).COMPLETED === TASKS ? true : undefined), 60_000);
  const { rows: ran } = await full.sql.query(`select distinct executor_id from dbos.workflow_status where workflow_uuid = any($1)`, [taskIds]);
  assert.deepEqual(ran.map((row) => row.executor_id), ['with-room']);
});
