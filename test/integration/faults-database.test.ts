import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { createDatabase, IDLE_IN_TRANSACTION_TIMEOUT_MS } from '../../src/db/database.ts';
import { startGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { assertCompletedOnce, submitStreamingTasks, waitUntilStreaming } from '../helpers/streaming-load.ts';
import { startOwnPostgres } from '../helpers/own-postgres.ts';

// Before: the first database error during streaming ended the server within 130 ms (4 runs of 4).
test('the external Postgres restarted mid-load: the server stays up, answers 503 while it is down, and every task and stream carries on', { timeout: 180_000 }, async (t) => {
  const postgres = await startOwnPostgres(t);
  const gateway = await startGateway(t, { databaseUrl: postgres.url, env: { DB_CONNECT_TIMEOUT_MS: '1000' } });
  const { taskIds, streams } = await submitStreamingTasks(gateway, 30, 5_000);
  await waitUntilStreaming(gateway, taskIds, 10);

  await postgres.stop();
  const refused = await gateway.request('POST', '/api/v1/tasks', { query: 'while the database is down' });
  assert.equal(refused.status, 503, refused.text);
  assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to try again');
  assert.match(refused.body.error, /database/);
  const startedAt = Date.now();
  const readiness = await gateway.request('GET', '/readiness');
  assert.equal(readiness.status, 503);
  assert.ok(Date.now() - startedAt < 2_000, 'readiness answers within 2 s');
  await sleep(1_000);
  await postgres.start();

  await assertCompletedOnce(gateway, taskIds, streams);
  assert.ok(gateway.isRunning(), `the server stays up:\n${gateway.output()}`);
  const after = await gateway.request('POST', '/api/v1/tasks', { query: 'after the restart' });
  assert.equal((await waitForTask(gateway, after.body.task_id)).status, 'TASK_STATUS_COMPLETED');
  const metrics = await gateway.request('GET', '/metrics');
  const retried = /agentgate_database_retries_total\{reason="unavailable"\} (\d+)/.exec(metrics.text);
  assert.ok(retried && Number(retried[1]) > 0, 'the waits for the database are counted');
});

test('an event write that fails for good fails its one task; the server and the other tasks carry on', { timeout: 60_000 }, async (t) => {
  const gateway = await startGateway(t);
  await gateway.sql.query(`
    create function poison_events() returns trigger language plpgsql as $$
    begin
      if new.type = 'LLM_PROMPT' and new.message like '%poison%' then raise exception 'poisoned event'; end if;
      return new;
    end $$;
    create trigger poison_events before insert on task_events for each row execute function poison_events()`);
  const poisoned = await gateway.request('POST', '/api/v1/tasks', { query: 'poison pill', context: { mock_delay_ms: 300 } });
  const healthy = await Promise.all(Array.from({ length: 5 }, (_, index) =>
    gateway.request('POST', '/api/v1/tasks', { query: `healthy ${index}`, context: { mock_delay_ms: 300 } })));

  const failed = await waitForTask(gateway, poisoned.body.task_id);
  assert.equal(failed.status, 'TASK_STATUS_FAILED');
  assert.match(failed.error, /poisoned event/);
  for (const answer of healthy) assert.equal((await waitForTask(gateway, answer.body.task_id)).status, 'TASK_STATUS_COMPLETED');
  assert.ok(gateway.isRunning());
});

// Before: with the database frozen, /readiness and GET /api/v1/tasks hung past 15 s.
test('a frozen database: readiness answers within 2 s, requests fail within their timeout, and tasks finish once it thaws', { timeout: 180_000 }, async (t) => {
  const postgres = await startOwnPostgres(t);
  const gateway = await startGateway(t, { databaseUrl: postgres.url, env: { DB_QUERY_TIMEOUT_MS: '2000', DB_CONNECT_TIMEOUT_MS: '1000' } });
  const { taskIds, streams } = await submitStreamingTasks(gateway, 10, 4_000);
  await waitUntilStreaming(gateway, taskIds, 3);

  await postgres.freeze();
  const timed = async (path: string) => {
    const startedAt = Date.now();
    const answer = await gateway.request('GET', path);
    return { status: answer.status, ms: Date.now() - startedAt, retryAfter: answer.headers.get('retry-after') };
  };
  const [readiness, list] = await Promise.all([timed('/readiness'), timed('/api/v1/tasks')]);
  assert.equal(readiness.status, 503);
  assert.ok(readiness.ms < 2_000, `readiness took ${readiness.ms} ms`);
  assert.equal(list.status, 503);
  assert.ok(list.ms < 10_000, `the list failed after ${list.ms} ms`);
  assert.ok(Number(list.retryAfter) > 0);
  await sleep(2_000);
  await postgres.thaw();

  await assertCompletedOnce(gateway, taskIds, streams);
  assert.ok(gateway.isRunning());
  assert.equal((await gateway.request('GET', '/readiness')).status, 200);
});

// Before: a worker frozen while holding a task's row lock held up a cancel of that task until the statement
// timeout (503 "the database is not answering"), since Postgres ended its session only after 60 s idle.
test('a process stalled inside a transaction holds its row locks for seconds only: a cancel of that task goes through, and the stalled transaction fails', { timeout: 60_000 }, async (t) => {
  const gateway = await startGateway(t);
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'a long answer', mode: 'simple', context: { mock_delay_ms: 30_000 } });
  const taskId = submitted.body.task_id;
  await waitFor('the task to run', async () => {
    const { rows } = await gateway.sql.query('select status from tasks where id = $1', [taskId]);
    return rows[0].status === 'RUNNING' ? true : undefined;
  });
  // A pool made as the server makes its own, standing in for a worker that froze after taking the lock.
  const { db } = createDatabase(gateway.databaseUrl, { size: 1, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
  t.after(() => db.destroy());
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => { locked = resolve; });
  const stalled = db.transaction().execute(async (transaction) => {
    await transaction.selectFrom('tasks').select('id').where('id', '=', taskId).forUpdate().execute();
    locked();
    await sleep(IDLE_IN_TRANSACTION_TIMEOUT_MS + 5_000);
    await transaction.selectFrom('tasks').select('id').where('id', '=', taskId).execute();
  });
  await lockTaken;

  const startedAt = Date.now();
  const cancel = await gateway.request('POST', `/api/v1/tasks/${taskId}/cancel`, { reason: 'stalled lock' });
  const waitedMs = Date.now() - startedAt;
  assert.ok([200, 202].includes(cancel.status), `${cancel.status} ${cancel.text}`);
  assert.ok(waitedMs < IDLE_IN_TRANSACTION_TIMEOUT_MS + 4_000, `the cancel waited ${waitedMs} ms for the lock`);
  await assert.rejects(stalled, 'the stalled session was ended, and its transaction with it');
  assert.equal((await waitForTask(gateway, taskId)).status, 'TASK_STATUS_CANCELLED');
});
