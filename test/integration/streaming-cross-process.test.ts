import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitForTask } from '../helpers/gateway.ts';
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
