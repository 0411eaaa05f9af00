import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitForTask } from '../helpers/gateway.ts';
import { readSse } from '../helpers/sse-client.ts';
import { submitStreamingTasks, waitUntilStreaming } from '../helpers/streaming-load.ts';

// Before: a SIGTERM with tasks in flight could exit with status 1 (a rejected event write) or hang until
// "killed by timeout (10000ms)" (open streams and long waits kept the server from closing).
test('SIGTERM with tasks, streams and a chat completion in flight exits cleanly at once; the tasks finish after a restart', { timeout: 120_000 }, async (t) => {
  // The chat completion's task answers slowly too (its mock delay comes from the server's setting).
  const gateway = await startGateway(t, { env: { MOCK_DELAY_MS: '8000' } });
  const { taskIds, streams } = await submitStreamingTasks(gateway, 10, 8_000);
  const completion = gateway.request('POST', '/v1/chat/completions', {
    model: 'service-chat', messages: [{ role: 'user', content: 'a long answer please' }], max_tokens: 200,
  });
  await waitUntilStreaming(gateway, taskIds, 5);

  const exit = await gateway.kill('SIGTERM');
  assert.deepEqual([exit.code, exit.signal], [0, null], gateway.output());
  assert.ok(exit.durationMs < 5_000, `shutdown took ${exit.durationMs} ms`);
  assert.doesNotMatch(gateway.output(), /killed by timeout|unhandled rejection/);
  for (const stream of await Promise.all(streams)) {
    assert.ok(stream.closedByServer, 'the server ended each open stream');
    assert.ok(stream.comments.some((comment) => comment.includes('reconnect with Last-Event-ID')), 'and said how to resume');
  }
  const interrupted = await completion;
  assert.equal(interrupted.status, 503, 'the waiting chat completion is told to retry');
  assert.equal(interrupted.body.error.code, 'service_unavailable');
  assert.ok(Number(interrupted.headers.get('retry-after')) > 0);

  await gateway.restart();
  for (const taskId of taskIds) {
    const task = await waitForTask(gateway, taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
  }
  const { rows } = await gateway.sql.query(`select task_id, count(*)::int as count from task_events where type = 'WORKFLOW_COMPLETED' and task_id = any($1) group by task_id`, [taskIds]);
  assert.deepEqual(rows.map((row) => row.count), taskIds.map(() => 1), 'each completed once');
});

test('the next stream after a restart resumes from the last event id', { timeout: 60_000 }, async (t) => {
  const gateway = await startGateway(t);
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'resume me', context: { mock_delay_ms: 3_000 } });
  const taskId = submitted.body.task_id;
  const first = readSse(`${gateway.url}/api/v1/stream/sse?workflow_id=${taskId}`, { timeoutMs: 30_000 });
  await waitUntilStreaming(gateway, [taskId], 1);
  await gateway.kill('SIGTERM');
  const cut = await first;
  const lastId = cut.messages.at(-1)?.id;
  assert.ok(lastId, 'some events arrived before the shutdown');
  await gateway.restart();
  const rest = await readSse(`${gateway.url}/api/v1/stream/sse?workflow_id=${taskId}`, { headers: { 'Last-Event-ID': lastId }, timeoutMs: 30_000 });
  const seqs = [...cut.messages, ...rest.messages].filter((frame) => frame.data !== '[DONE]').map((frame) => JSON.parse(frame.data).seq as number);
  assert.deepEqual(seqs, seqs.map((_, index) => index + 1), 'nothing lost or repeated across the restart');
  assert.equal(rest.messages.at(-1)?.event, 'done');
});
