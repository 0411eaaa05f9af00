import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

test('a task paused before a crash is still paused after the restart, and resume then completes it', async (t) => {
  const gateway = await startGateway(t);
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'survive the pause', context: { mock_delay_ms: 3000 } });
  const taskId = submitted.body.task_id;
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/pause`, { reason: 'hold' })).status, 202);
  await waitFor('the workflow to pause', async () => {
    const { rows } = await gateway.sql.query(`select 1 from task_events where task_id = $1 and type = 'WORKFLOW_PAUSED'`, [taskId]);
    return rows.length > 0 ? true : undefined;
  });
  await gateway.kill('SIGKILL');
  await gateway.restart();

  const state = await gateway.request('GET', `/api/v1/tasks/${taskId}/control-state`);
  assert.equal(state.body.is_paused, true);
  assert.equal(state.body.pause_reason, 'hold');
  assert.equal((await gateway.request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED');
  const resumed = await gateway.request('POST', `/api/v1/tasks/${taskId}/resume`);
  assert.equal(resumed.status, 202);
  const task = await waitForTask(gateway, taskId);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED');
  const { rows } = await gateway.sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_OUTPUT'`, [taskId]);
  assert.equal(rows[0].count, 1);
});

test('a cancel requested while the worker is down takes effect when it comes back', async (t) => {
  const worker = await startGateway(t, { env: { EXECUTOR_ID: 'worker-1' } });
  const front = await startGateway(t, { databaseUrl: worker.databaseUrl, env: { EXECUTOR_ID: 'front-1' }, args: ['--role', 'gateway'] });
  const submitted = await front.request('POST', '/api/v1/tasks', { query: 'cancel me later', context: { mock_delay_ms: 6000, mock_answer_words: 100 } });
  const taskId = submitted.body.task_id;
  await waitFor('the answer to stream', async () => {
    const { rows } = await worker.sql.query(`select 1 from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId]);
    return rows.length > 0 ? true : undefined;
  });
  await worker.kill('SIGKILL');
  const cancel = await front.request('POST', `/api/v1/tasks/${taskId}/cancel`, { reason: 'while down' });
  assert.equal(cancel.status, 202, 'accepted; the task is not cancelled yet');
  assert.equal(cancel.body.status, 'TASK_STATUS_RUNNING');
  await worker.restart();
  const task = await waitForTask(front, taskId);
  assert.equal(task.status, 'TASK_STATUS_CANCELLED');
  const { rows } = await worker.sql.query('select count(*)::int as count from usage_records where task_id = $1', [taskId]);
  assert.equal(rows[0].count, 0, 'the recovered call was aborted before it was billed');
});
