import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

/**
 * Tasks in flight across the upgrade to one-step simple tasks (issue 13): a workflow started by the earlier
 * code carries only the task id, and its recorded steps belong to the step-by-step sequence. The new code
 * must replay them on that path, also after a crash in the middle of one.
 */
test('a workflow started by the earlier code, killed mid-answer, finishes on the step-by-step path after the upgrade', async (t) => {
  // A gateway-only process enqueues without running anything, so the workflow can be given the old shape first.
  const gateway = await startGateway(t, { args: ['--role', 'gateway'] });
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'started before the upgrade', context: { mock_delay_ms: 4000 } });
  assert.equal(submitted.status, 200, submitted.text);
  const taskId = submitted.body.task_id;
  const { rows: [enqueued] } = await gateway.sql.query(`
    select ws.status, coalesce(wi.inputs, ws.inputs) as inputs, wi.workflow_uuid is not null as stored_apart
    from dbos.workflow_status ws left join dbos.workflow_input wi using (workflow_uuid) where ws.workflow_uuid = $1`, [taskId]);
  assert.equal(enqueued.status, 'ENQUEUED');
  const inputs = JSON.parse(enqueued.inputs);
  assert.deepEqual(inputs.json, [taskId, 2], 'new workflows carry the shape they run in');
  // The earlier code enqueued the task id alone.
  const table = enqueued.stored_apart ? 'dbos.workflow_input' : 'dbos.workflow_status';
  await gateway.sql.query(`update ${table} set inputs = $2 where workflow_uuid = $1`, [taskId, JSON.stringify({ ...inputs, json: [taskId] })]);

  const worker = await startGateway(t, { databaseUrl: gateway.databaseUrl });
  await waitFor('the answer to stream', async () => {
    const { rows } = await worker.sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId]);
    return rows[0].count >= 3 ? true : undefined;
  });
  await worker.kill('SIGKILL');
  await worker.restart();

  const task = await waitForTask(worker, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED');
  const timeline = await waitFor('the workflow to end', async () => {
    const answer = await worker.request('GET', `/api/v1/tasks/${taskId}/timeline`);
    return answer.body.engine_status === 'SUCCESS' ? answer.body : undefined;
  });
  assert.deepEqual(timeline.steps.map((step: any) => step.name), [
    'start-task', 'checkpoint:pre_routing', 'checkpoint:pre_execution', 'session-context', 'simple-agent', 'checkpoint:pre_completion',
    'complete-task', 'session-title',
  ]);
  assert.equal(timeline.recovery_attempts, 1);
  const { rows: [counts] } = await worker.sql.query(`
    select (select count(*)::int from usage_records where task_id = $1) as usage_rows,
      (select count(*)::int from task_events where task_id = $1 and type in ('LLM_OUTPUT', 'WORKFLOW_COMPLETED', 'STREAM_END')) as closing_events,
      (select string_agg(message, '' order by seq) from task_events where task_id = $1 and type = 'LLM_PARTIAL') as streamed`, [taskId]);
  assert.equal(counts.usage_rows, 1, 'billed once');
  assert.equal(counts.closing_events, 3, 'one final answer, one completion, one end of stream');
  assert.equal(counts.streamed, task.result, 'the deltas join to the answer');
});
