import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { readSse, type SseMessage } from '../helpers/sse-client.ts';
import { submitStreamingTasks, waitUntilStreaming } from '../helpers/streaming-load.ts';

const GRACE_SECONDS = 3;

interface LoadResult { statuses: number[]; failures: string[] }

/**
 * Requests in a loop, as clients behind a load balancer send them: to the first process while its readiness is
 * 200, to the second once the balancer would have taken the first out.
 */
function runLoad(targets: { draining: Gateway; other: Gateway }, isOut: () => boolean, stop: AbortSignal): Promise<LoadResult> {
  const result: LoadResult = { statuses: [], failures: [] };
  const loop = async (worker: number) => {
    for (let round = 0; !stop.aborted; round++) {
      const gateway = isOut() ? targets.other : targets.draining;
      try {
        const answer = round % 3 === 0
          ? await gateway.request('POST', '/api/v1/tasks', { query: `load ${worker}-${round}` })
          : await gateway.request('GET', round % 3 === 1 ? '/api/v1/tasks?limit=5' : '/api/v1/sessions?limit=5');
        result.statuses.push(answer.status);
      } catch (error) {
        result.failures.push(`${gateway === targets.draining ? 'draining' : 'other'}: ${(error as Error).cause ?? error}`);
      }
    }
  };
  return Promise.all(Array.from({ length: 4 }, (_, worker) => loop(worker))).then(() => result);
}

const seqOf = (frame: SseMessage) => JSON.parse(frame.data).seq as number;
const isEvent = (frame: SseMessage) => frame.data !== '[DONE]' && frame.event !== 'error';

test('SIGTERM under load: no request answered 5xx, every stream ends resumable and resumes without loss on the other process, exit within the grace period', { timeout: 180_000 }, async (t) => {
  const env = { SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS), DB_POOL_SIZE: '10', ENGINE_DB_POOL_SIZE: '10' };
  const draining = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'draining' } });
  const other = await startGateway(t, { databaseUrl: draining.databaseUrl, env: { ...env, EXECUTOR_ID: 'other' } });
  // Answers that take longer than the grace period: part of them are still running when it ends.
  const { taskIds, streams } = await submitStreamingTasks(draining, 8, 8_000);
  await waitUntilStreaming(draining, taskIds, 4);

  let out = false;
  const stopLoad = new AbortController();
  const load = runLoad({ draining, other }, () => out, stopLoad.signal);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const exited = draining.kill('SIGTERM');
  await waitFor('readiness to turn 503', async () => ((await draining.request('GET', '/readiness')).status === 503 ? true : undefined), 2_000);
  out = true;

  const cut = await Promise.all(streams);
  const resumed = await Promise.all(cut.map((stream, index) => {
    const last = stream.messages.at(-1)!;
    assert.equal(last.event, 'error', `stream ${index} ends with the shutdown notice`);
    const notice = JSON.parse(last.data);
    assert.equal(notice.code, 'server_shutdown');
    return readSse(`${other.url}/api/v1/stream/sse?workflow_id=${taskIds[index]}`, { headers: { 'Last-Event-ID': notice.last_event_id }, timeoutMs: 60_000 });
  }));
  const exit = await exited;
  stopLoad.abort();
  const { statuses, failures } = await load;

  assert.deepEqual([exit.code, exit.signal], [0, null], draining.output());
  assert.ok(exit.durationMs < (GRACE_SECONDS + 5) * 1000, `exited ${exit.durationMs} ms after SIGTERM`);
  assert.ok(statuses.length > 20, `${statuses.length} requests answered`);
  assert.deepEqual(statuses.filter((status) => status >= 500), [], 'no request answered 5xx');
  assert.deepEqual(failures, [], 'no request failed');
  for (const [index, taskId] of taskIds.entries()) {
    const task = await waitForTask(other, taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', `task ${taskId}: ${task.error}`);
    const frames = [...cut[index].messages, ...resumed[index].messages];
    const seqs = frames.filter(isEvent).map(seqOf);
    assert.deepEqual(seqs, seqs.map((_, position) => position + 1), `stream of ${taskId}: nothing lost or repeated`);
    assert.equal(resumed[index].messages.at(-1)?.event, 'done');
    const text = frames.filter((frame) => frame.event === 'thread.message.delta').map((frame) => JSON.parse(frame.data).delta).join('');
    assert.equal(text, task.result, `stream of ${taskId} carried the whole answer`);
  }
  const { rows } = await other.sql.query(`select count(*)::int as count from task_events where task_id = any($1) and type = 'ERROR_RECOVERY' and payload->>'recovery' = 'shutdown'`, [taskIds]);
  assert.ok(rows[0].count > 0, 'tasks still running at the end of the grace period were handed over');
  const { rows: usage } = await other.sql.query('select task_id, count(*)::int as count from usage_records where task_id = any($1) group by task_id', [taskIds]);
  assert.deepEqual(usage.map((row) => row.count), taskIds.map(() => 1), 'one model call recorded per task');
});

// The step a shutdown cuts fails (its model call aborted) before the hand-over has moved the workflow on: the engine
// would record that failure as the step's outcome, and the worker taking the workflow over would replay it as the
// task's own. Here the hand-over is held back (a SHARE lock on the engine's status table lets the step's record through
// and stops the requeue) so that the failure always comes first.
test('a step cut by the shutdown before the hand-over moved its workflow on records nothing: the other process completes the task', { timeout: 120_000 }, async (t) => {
  const env = { SHUTDOWN_GRACE_SECONDS: '1', EXECUTOR_DEAD_AFTER_SECONDS: '4', DB_POOL_SIZE: '8', ENGINE_DB_POOL_SIZE: '8' };
  const draining = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'draining' } });
  const other = await startGateway(t, { databaseUrl: draining.databaseUrl, env: { ...env, EXECUTOR_ID: 'other' } });
  const { taskIds, streams } = await submitStreamingTasks(draining, 1, 8_000);
  await waitUntilStreaming(draining, taskIds, 1);
  const [taskId] = taskIds;

  const holder = await other.sql.connect();
  await holder.query('begin');
  await holder.query('lock table dbos.workflow_status in share mode');
  const exited = draining.kill('SIGTERM');
  try {
    // The grace period (1 s) ends, the call is aborted, and its step fails while the requeue waits for the lock.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  } finally {
    await holder.query('commit');
    holder.release();
  }
  await exited;
  await Promise.all(streams);
  const task = await waitForTask(other, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', `task ${taskId}: ${task.error}`);
  const { rows } = await other.sql.query(`select count(*)::int as count from dbos.operation_outputs where workflow_uuid = $1 and error is not null`, [taskId]);
  assert.equal(rows[0].count, 0, 'no step outcome recorded from the shutdown');
});
