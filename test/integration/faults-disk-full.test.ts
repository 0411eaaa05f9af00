import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { startOwnPostgres } from '../helpers/own-postgres.ts';
import {
  adminSession, assertDagTasksCompletedOnce, mountSmallDisk, submitDagTasks, waitForAllEnded, waitUntilAgentsRun,
} from '../helpers/write-faults.ts';

const FULL_FOR_MS = 8_000;

// Before: readiness said 200 while every write needing space failed, and submissions answered 503 yet created
// (and ran) their tasks.
test('a disk-full window: readiness 503, submissions 503 with Retry-After and no task created for a 503, and the tasks in flight complete once after', { timeout: 180_000 }, async (t) => {
  const postgres = await startOwnPostgres(t);
  const disk = await mountSmallDisk(t, 96, path.join(postgres.dataDir, 'postgres'));
  if (typeof disk === 'string') return t.skip(disk);
  const maintenanceUrl = new URL(postgres.url);
  maintenanceUrl.pathname = '/postgres';
  const admin = await adminSession(t, maintenanceUrl.toString());
  await admin.query(`create tablespace small_disk location '${disk.dir}'`);
  await admin.query('alter database agentgate set tablespace small_disk');
  const gateway = await startGateway(t, { databaseUrl: postgres.url, env: { DB_CONNECT_TIMEOUT_MS: '1000' } });
  const taskIds = await submitDagTasks(gateway, 5, 1_500);
  await waitUntilAgentsRun(gateway, taskIds, 2);

  await disk.fill();
  const fullAt = Date.now();
  await waitFor('readiness to say 503', async () => ((await gateway.request('GET', '/readiness')).status === 503 ? true : undefined), 10_000);
  t.diagnostic(`readiness 503 ${Date.now() - fullAt} ms after the disk filled`);
  const answers = [];
  // Half carry an Idempotency-Key: their answer is stored after the task is written, a second write that may fail.
  for (let index = 0; index < 10; index++) {
    const headers: Record<string, string> = index % 2 === 0 ? { 'idempotency-key': `disk-full-${index}` } : {};
    answers.push(await gateway.request('POST', '/api/v1/tasks', { query: `while the disk is full ${index}` }, headers));
  }
  const refused = answers.filter((answer) => answer.status === 503);
  const accepted = answers.filter((answer) => answer.status === 200);
  t.diagnostic(`during the window: ${refused.length} submissions answered 503, ${accepted.length} answered 200`);
  assert.equal(refused.length + accepted.length, answers.length, answers.map((answer) => `${answer.status} ${answer.text}`).join('\n'));
  assert.ok(refused.length > 0, 'a submission that cannot be written is refused');
  for (const answer of refused) assert.ok(Number(answer.headers.get('retry-after')) > 0, answer.text);
  await sleep(FULL_FOR_MS - (Date.now() - fullAt));
  await disk.free();

  await waitForAllEnded(gateway, taskIds, 90_000);
  await assertDagTasksCompletedOnce(gateway, taskIds);
  for (const answer of accepted) assert.equal((await waitForTask(gateway, answer.body.task_id, 60_000)).status, 'TASK_STATUS_COMPLETED');
  const { rows: [created] } = await gateway.sql.query('select count(*)::int as count from tasks where not (id = any($1))', [taskIds]);
  assert.equal(created.count, accepted.length, 'a task exists for each 200 and for no 503');
  await waitFor('readiness to say 200 again', async () => ((await gateway.request('GET', '/readiness')).status === 200 ? true : undefined), 15_000);
  assert.ok(gateway.isRunning());
});
