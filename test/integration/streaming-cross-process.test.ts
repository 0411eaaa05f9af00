import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registerAccount, withKey } from '../helpers/accounts.ts';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { readSse, seqOf } from '../helpers/sse-client.ts';

test('a stream served by process B receives, in order, the events a worker in process A produces', async (t) => {
  const processA = await startGateway(t, { env: { EXECUTOR_ID: 'process-a' } });
  // B runs as a gateway only (it dequeues no tasks), so every event it streams was produced by A.
  const gatewayOnly = await startGateway(t, { databaseUrl: processA.databaseUrl, env: { EXECUTOR_ID: 'process-b' }, args: ['--role', 'gateway'] });

  const submitted = await processA.request('POST', '/api/v1/tasks', { query: 'across processes', context: { mock_answer_words: 80, mock_delay_ms: 2000 } });
  const stream = await readSse(`${gatewayOnly.url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}`);
  await waitForTask(processA, submitted.body.task_id);
  const { rows } = await processA.sql.query('select seq, stream_id from task_events where task_id = $1 order by seq', [submitted.body.task_id]);
  assert.ok(stream.closedByServer);
  assert.deepEqual(stream.messages.map((message) => message.id), rows.map((row) => row.stream_id));
  assert.ok(stream.messages.filter((message) => message.event === 'thread.message.delta').length > 3, 'deltas arrived live');
  const seqs = stream.messages.slice(0, -1).map(seqOf);
  assert.deepEqual(seqs, seqs.map((_, index) => index + 1));
  const { rows: workflows } = await processA.sql.query('select executor_id from dbos.workflow_status where workflow_uuid = $1', [submitted.body.task_id]);
  assert.equal(workflows[0].executor_id, 'process-a', 'the task ran in process A');
});

test('the concurrent-stream limit of a key holds across processes, and a closed stream frees its slot for any process', async (t) => {
  const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', MAX_STREAMS_PER_KEY: '3' };
  const processA = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'streams-a' } });
  const processB = await startGateway(t, { databaseUrl: processA.databaseUrl, env: { ...env, EXECUTOR_ID: 'streams-b' }, args: ['--role', 'gateway'] });
  const account = await registerAccount(processA, 'streams');
  const task = await processA.request('POST', '/api/v1/tasks', { query: 'long', context: { mock_delay_ms: 30_000 } }, withKey(account));
  const open = (gateway: Gateway, controller: AbortController) =>
    fetch(`${gateway.url}/api/v1/stream/sse?workflow_id=${task.body.task_id}`, { headers: withKey(account), signal: controller.signal });
  const controllers = [new AbortController(), new AbortController(), new AbortController()];
  const opened = await Promise.all([open(processA, controllers[0]), open(processA, controllers[1]), open(processB, controllers[2])]);
  assert.deepEqual(opened.map((response) => response.status), [200, 200, 200]);
  const fourth = await open(processB, new AbortController());
  assert.equal(fourth.status, 429, 'the slots taken in process A count in process B');
  controllers[0].abort();
  const reopened = await waitFor('a slot to be freed', async () => {
    const controller = new AbortController();
    const response = await open(processB, controller);
    if (response.status === 200) return controller;
    await response.body?.cancel();
    return undefined;
  }, 5_000);
  reopened.abort();
  for (const controller of controllers) controller.abort();
  await processA.request('POST', `/api/v1/tasks/${task.body.task_id}/cancel`, undefined, withKey(account));
});
