import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startGateway, waitFor, type Gateway } from '../helpers/gateway.ts';
import { startOwnPostgres } from '../helpers/own-postgres.ts';

// The numbers are a 40 s outage against the default 30 s lease, and 50 tasks: scaled here to an outage of
// twice a 6 s lease and 20 five-agent DAG tasks, which puts every lease as far past its end as the did.
// bench/faults/lease-outage.ts runs the full-size scenario.
const DEAD_AFTER_SECONDS = Number(process.env.LEASE_OUTAGE_DEAD_AFTER_SECONDS ?? 6);
const OUTAGE_MS = Number(process.env.LEASE_OUTAGE_MS ?? 2 * DEAD_AFTER_SECONDS * 1000);
const TASKS = Number(process.env.LEASE_OUTAGE_TASKS ?? 20);
const AGENTS = ['a1', 'a2', 'a3', 'a4', 'a5'];
// Once Postgres answers, waiting work retries within DATABASE_RETRY_MAX_WAIT_MS (5 s), a stalled workflow is resumed
// within 7 s, and a task has at most three model calls of 1.5 s left: about 15 s, doubled for a loaded machine. With
// the engine's own backoff of up to a minute, tasks waited 16 to 48 s more.
const RESUMED_WITHIN_MS = 30_000;
// Each process runs a few tasks at most, so that the load spreads over all four (with the default 1024 the API process
// would start every task on arrival and the outage would find work on it alone).
const env = { EXECUTOR_DEAD_AFTER_SECONDS: String(DEAD_AFTER_SECONDS), DB_POOL_SIZE: '8', ENGINE_DB_POOL_SIZE: '8', WORKER_CONCURRENCY: '16' };

async function submitDagTasks(api: Gateway, count: number): Promise<string[]> {
  const subtasks = AGENTS.map((id) => ({ id, description: `part ${id}` }));
  const taskIds: string[] = [];
  for (let index = 0; index < count; index++) {
    const answer = await api.request('POST', '/api/v1/tasks', {
      query: `outage DAG ${index}`, mode: 'standard',
      context: { mock_delay_ms: 1_500, mock_plan: { complexity_score: 0.8, subtasks, execution_strategy: 'parallel' } },
    });
    assert.equal(answer.status, 200, answer.text);
    taskIds.push(answer.body.task_id);
  }
  return taskIds;
}

/** Each task completed once: one model call per agent, one answer, one end, gap-free events. */
async function assertEachDagCompletedOnce(api: Gateway, taskIds: string[]): Promise<void> {
  const { rows } = await api.sql.query(`
    select t.id, t.status, array_agg(e.seq order by e.seq) as seqs,
      (select array_agg(u.agent_id order by u.agent_id) from usage_records u where u.task_id = t.id) as usage_agents,
      count(*) filter (where e.type = 'WORKFLOW_COMPLETED')::int as completions,
      count(*) filter (where e.type = 'STREAM_END')::int as ends
    from tasks t join task_events e on e.task_id = t.id where t.id = any($1) group by t.id`, [taskIds]);
  assert.equal(rows.length, taskIds.length);
  for (const row of rows) {
    assert.deepEqual([row.status, row.completions, row.ends], ['COMPLETED', 1, 1], `task ${row.id}`);
    assert.deepEqual(row.usage_agents, [...AGENTS, 'decompose', 'synthesis'].sort(), `one model call per agent of ${row.id}`);
    assert.deepEqual(row.seqs, row.seqs.map((_: number, index: number) => index + 1), `gap-free events of ${row.id}`);
  }
}

test('Postgres stopped for twice EXECUTOR_DEAD_AFTER_SECONDS under a DAG load on an API process and 3 workers: no process exits, nobody is taken over, every task completes once', {
  timeout: 240_000 + 3 * DEAD_AFTER_SECONDS * 1000 + OUTAGE_MS }, async (t) => {
  const postgres = await startOwnPostgres(t);
  // The API process also runs tasks (role all), so it holds work another process could take over.
  const api = await startGateway(t, { databaseUrl: postgres.url, env: { ...env, EXECUTOR_ID: 'api' }, args: ['--role', 'all'] });
  const workers = await Promise.all(['w1', 'w2', 'w3'].map((id) =>
    startGateway(t, { databaseUrl: postgres.url, env: { ...env, EXECUTOR_ID: id }, args: ['--role', 'worker'] })));
  const processes = [api, ...workers];
  const taskIds = await submitDagTasks(api, TASKS);
  await waitFor('agents to run on several processes', async () => {
    const { rows } = await api.sql.query(`select count(distinct executor_id)::int as executors from dbos.workflow_status where workflow_uuid = any($1) and status = 'PENDING'`, [taskIds]);
    return rows[0].executors >= 3 ? true : undefined;
  }, 30_000);

  await postgres.stop();
  await sleep(OUTAGE_MS);
  await postgres.start();
  const backAt = Date.now();

  await waitFor('every task to finish', async () => {
    const { rows } = await api.sql.query(`select count(*)::int as count from tasks where id = any($1) and status in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')`, [taskIds]);
    return rows[0].count === taskIds.length ? true : undefined;
  }, RESUMED_WITHIN_MS).catch(async (error: unknown) => {
    const { rows: executors } = await api.sql.query('select id, heartbeat_at, recovered_by, recovered_at from executors');
    const { rows: statuses } = await api.sql.query(`select t.status, w.status as workflow, w.executor_id, count(*)::int from tasks t join dbos.workflow_status w on w.workflow_uuid = t.id::text
      where t.id = any($1) group by 1, 2, 3`, [taskIds]);
    t.diagnostic(JSON.stringify({ running: processes.map((process) => process.isRunning()), executors, statuses }));
    throw error;
  });
  t.diagnostic(`every task finished ${Date.now() - backAt} ms after Postgres came back`);
  // Fencing acted within seconds of the database's return; a whole lease later, anyone judged would have exited.
  const settled = backAt + 2 * DEAD_AFTER_SECONDS * 1000;
  if (Date.now() < settled) await sleep(settled - Date.now());
  for (const [index, process] of processes.entries()) {
    if (process.isRunning()) continue;
    const exit = await process.exited();
    const errors = process.output().split('\n').filter((line) => /"level":(50|60)/.test(line)).map((line) => line.slice(0, 600)).slice(-8);
    assert.fail(`process ${index} exited (code ${exit.code}, signal ${exit.signal}):\n${errors.join('\n')}`);
  }
  const { rows: takenOver } = await api.sql.query(`select id, recovered_by from executors where recovered_at is not null`);
  assert.deepEqual(takenOver, [], 'no executor was taken over for an outage every process shared');
  await assertEachDagCompletedOnce(api, taskIds).catch(async (error: unknown) => {
    const { rows } = await api.sql.query(`select task_id, seq, type, agent_id, left(message, 300) as message from task_events
      where task_id = any($1) and type in ('ERROR_OCCURRED', 'WORKFLOW_FAILED') order by task_id, seq`, [taskIds]);
    t.diagnostic(JSON.stringify(rows));
    throw error;
  });
});
