import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startGateway, waitForTask } from '../helpers/gateway.ts';
import { readSse } from '../helpers/sse-client.ts';

const CLIENTS = 20;
const TASKS_PER_CLIENT = 10;

// Before the lock-order fix, a cancel racing the task's event writes deadlocked in Postgres and the
// rejection ended the whole server (3 runs of 3 with 100 cancels).
test('200 cancels at random moments under streaming: every cancel answers 200/202, the server stays up, every task ends cleanly', { timeout: 180_000 }, async (t) => {
  const gateway = await startGateway(t);
  const cancelStatuses: number[] = [];
  const streams: Array<Promise<{ taskId: string; events: string[] }>> = [];
  const taskIds: string[] = [];

  const client = async () => {
    for (let index = 0; index < TASKS_PER_CLIENT; index++) {
      const submitted = await gateway.request('POST', '/api/v1/tasks', { query: `cancel me ${index}`, context: { mock_delay_ms: 1500 } });
      assert.equal(submitted.status, 200, submitted.text);
      const taskId = submitted.body.task_id as string;
      taskIds.push(taskId);
      streams.push(readSse(`${gateway.url}/api/v1/stream/sse?workflow_id=${taskId}`, { timeoutMs: 60_000 })
        .then((result) => ({ taskId, events: result.messages.map((message) => message.event ?? '') })));
      await sleep(Math.random() * 800);
      const cancelled = await gateway.request('POST', `/api/v1/tasks/${taskId}/cancel`, { reason: 'x' });
      cancelStatuses.push(cancelled.status);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));

  assert.equal(cancelStatuses.length, CLIENTS * TASKS_PER_CLIENT);
  assert.deepEqual(cancelStatuses.filter((status) => status !== 200 && status !== 202), [], 'every cancel answers 200 or 202');
  assert.ok(gateway.isRunning(), `the server stays up:\n${gateway.output()}`);
  for (const taskId of taskIds) {
    const task = await waitForTask(gateway, taskId, 30_000);
    assert.ok(['TASK_STATUS_CANCELLED', 'TASK_STATUS_COMPLETED'].includes(task.status), `${taskId}: ${task.status}`);
  }
  for (const stream of await Promise.all(streams)) {
    assert.equal(stream.events.at(-1), 'done', `the stream of ${stream.taskId} ends with done`);
  }
  const { rows } = await gateway.sql.query(`
    select task_id, array_agg(seq order by seq) as seqs, count(*) filter (where type = 'STREAM_END')::int as ends,
      count(*) filter (where type in ('WORKFLOW_CANCELLED', 'WORKFLOW_COMPLETED'))::int as finishes
    from task_events where task_id = any($1) group by task_id`, [taskIds]);
  assert.equal(rows.length, taskIds.length);
  for (const row of rows) {
    assert.deepEqual(row.seqs, row.seqs.map((_: number, index: number) => index + 1), `gap-free seq for ${row.task_id}`);
    assert.deepEqual([row.ends, row.finishes], [1, 1], `one ending for ${row.task_id}`);
  }
  assert.doesNotMatch(gateway.output(), /deadlock|shutting down/);
});
