import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { holdInserts } from '../helpers/held-inserts.ts';

/** The engine's state of the task's workflow: SUCCESS once it returned (completed, parked or ended), CANCELLED if never started. */
const workflowStatus = async (gateway: ReturnType<ReturnType<typeof useGateway>>, taskId: string) =>
  (await gateway.sql.query('select status from dbos.workflow_status where workflow_uuid = $1', [taskId])).rows[0]?.status as string | undefined;

/** The queue a workflow went through: null for one this process started at once (issue 13). */
const queueOf = async (gateway: ReturnType<ReturnType<typeof useGateway>>, taskId: string) =>
  (await gateway.sql.query('select queue_name from dbos.workflow_status where workflow_uuid = $1', [taskId])).rows[0]?.queue_name as string | null;

const eventTypes = async (gateway: ReturnType<ReturnType<typeof useGateway>>, taskId: string) =>
  (await gateway.sql.query('select type, payload from task_events where task_id = $1 order by seq', [taskId])).rows;

describe('pause, resume and cancel', () => {
  const gateway = useGateway();
  const submit = async (context: Record<string, unknown>) =>
    (await gateway().request('POST', '/api/v1/tasks', { query: 'controlled task', context })).body.task_id as string;
  const waitForPartials = (taskId: string) => waitFor('the answer to stream', async () => {
    const { rows } = await gateway().sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId]);
    return rows[0].count > 0 ? true : undefined;
  });

  // The control tests' answers run for seconds: the mock keeps to its schedule however busy the machine, so a short
  // answer can end before the request that should find it running (a pause, a resume) arrives.
  it('pauses at the next checkpoint, reports it, and resumes to one final answer', async () => {
    const taskId = await submit({ mock_delay_ms: 4000 });
    assert.equal(await queueOf(gateway(), taskId), null, 'a free worker started it directly');
    await waitForPartials(taskId);
    const paused = await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`, { reason: 'coffee break' });
    assert.equal(paused.status, 202);
    assert.deepEqual(paused.body, { success: true, message: 'Pause signal sent', task_id: taskId });

    const state = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`);
    assert.equal(state.body.is_paused, true);
    assert.equal(state.body.pause_reason, 'coffee break');
    assert.ok(!Number.isNaN(Date.parse(state.body.paused_at)));
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED');

    const again = await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`);
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'task is already paused');

    const pausedEvent = await waitFor('WORKFLOW_PAUSED', async () =>
      (await eventTypes(gateway(), taskId)).find((event) => event.type === 'WORKFLOW_PAUSED'));
    assert.equal(pausedEvent.payload.checkpoint, 'pre_completion', 'the in-flight agent step finished first');
    await waitFor('the paused workflow to park', async () => await workflowStatus(gateway(), taskId) === 'SUCCESS' || undefined);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED', 'it stays paused');

    const resumed = await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`, {});
    assert.equal(resumed.status, 202);
    assert.equal(resumed.body.message, 'Resume signal sent');
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    const types = (await eventTypes(gateway(), taskId)).map((event) => event.type);
    const order = ['WORKFLOW_PAUSING', 'WORKFLOW_PAUSED', 'WORKFLOW_RESUMED', 'WORKFLOW_COMPLETED', 'STREAM_END'];
    assert.deepEqual(types.filter((type) => order.includes(type)), order);
    assert.equal(types.filter((type) => type === 'LLM_OUTPUT').length, 1, 'the answer is produced once');
    const { rows } = await gateway().sql.query(`select count(*)::int as count from usage_records where task_id = $1 and agent_id = 'simple-agent'`, [taskId]);
    assert.equal(rows[0].count, 1, 'the model was called once');
    const stateAfter = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`);
    assert.deepEqual(stateAfter.body, { is_paused: false, is_cancelled: false, paused_at: '', pause_reason: '', paused_by: '', cancel_reason: '', cancelled_by: '' });
  });

  it('resume on a task that is not paused answers 409', async () => {
    const taskId = await submit({ mock_delay_ms: 4000 });
    const answer = await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`);
    assert.equal(answer.status, 409);
    assert.deepEqual(answer.body, { error: 'task is not paused' });
    await waitForTask(gateway(), taskId);
  });

  it('cancel while running aborts the streaming answer: no usage is recorded and no deltas follow', async () => {
    const taskId = await submit({ mock_delay_ms: 8000, mock_answer_words: 400 });
    await waitForPartials(taskId);
    const cancelled = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, { reason: 'changed my mind' });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.deepEqual(cancelled.body, { success: true, message: 'Task cancelled successfully', status: 'TASK_STATUS_CANCELLED' });
    const countPartials = async () => (await gateway().sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId])).rows[0].count;
    const partialsAtCancel = await countPartials();
    await waitFor('the workflow to end', async () => await workflowStatus(gateway(), taskId) === 'SUCCESS' || undefined);
    assert.equal(await countPartials(), partialsAtCancel, 'no tokens after the cancel');
    const { rows } = await gateway().sql.query('select count(*)::int as count from usage_records where task_id = $1', [taskId]);
    assert.equal(rows[0].count, 0, 'the aborted call is not billed');
    const types = (await eventTypes(gateway(), taskId)).map((event) => event.type);
    assert.deepEqual(types.slice(-2), ['WORKFLOW_CANCELLED', 'STREAM_END']);
    assert.ok(types.indexOf('WORKFLOW_CANCELLING') < types.indexOf('WORKFLOW_CANCELLED'));
    assert.equal(types.at(-1), 'STREAM_END');
    const state = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`);
    assert.equal(state.body.is_cancelled, true);
    assert.equal(state.body.cancel_reason, 'changed my mind');
  });

  it('cancel while paused ends the task as cancelled', async () => {
    const taskId = await submit({ mock_delay_ms: 4000 });
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`)).status, 202);
    await waitFor('WORKFLOW_PAUSED', async () => (await eventTypes(gateway(), taskId)).find((event) => event.type === 'WORKFLOW_PAUSED'));
    const cancelled = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`);
    assert.equal(cancelled.body.status, 'TASK_STATUS_CANCELLED');
    const event = (await eventTypes(gateway(), taskId)).find((item) => item.type === 'WORKFLOW_CANCELLED');
    assert.equal(event.payload.was_paused, true);
  });

  it('every terminal state answers the spec 409s to pause, resume and cancel', async () => {
    const taskId = await submit({});
    await waitForTask(gateway(), taskId);
    for (const [status, word] of [['COMPLETED', 'completed'], ['FAILED', 'failed'], ['CANCELLED', 'cancelled'], ['TIMEOUT', 'timed out']]) {
      await gateway().sql.query('update tasks set status = $2 where id = $1', [taskId, status]);
      const pause = await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`);
      assert.deepEqual([pause.status, pause.body.error], [409, `cannot pause ${word} task`]);
      const resume = await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`);
      assert.deepEqual([resume.status, resume.body.error], [409, `cannot resume ${word} task`]);
      const cancel = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`);
      assert.equal(cancel.status, 409);
      assert.equal(cancel.body.status, `TASK_STATUS_${status}`);
      assert.equal(cancel.body.success, false);
    }
  });

  it('a task cancelled between its submission and its workflow\'s start: the workflow begins from the submitted row, calls no model and leaves it cancelled', async () => {
    // Every workflow's start (the engine's insert of its row) waits until released.
    const hold = await holdInserts(gateway().databaseUrl, 'dbos.workflow_status', { lockKey: 4244 });
    try {
      const submission = gateway().request('POST', '/api/v1/tasks', { query: 'held at its start' });
      const taskId = await waitFor('the task row', async () =>
        (await gateway().sql.query(`select id from tasks where query = 'held at its start'`)).rows[0]?.id as string | undefined);
      await waitFor('the workflow start to be held', async () => (await hold.waiting()) || undefined);
      const cancelled = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`);
      assert.equal(cancelled.body.status, 'TASK_STATUS_CANCELLED', cancelled.text);
      await hold.release();
      assert.equal((await submission).status, 200);
      await waitFor('the workflow to end', async () => (await workflowStatus(gateway(), taskId)) === 'SUCCESS' || undefined);
      const types = (await eventTypes(gateway(), taskId)).map((event) => event.type);
      assert.deepEqual(types, ['WORKFLOW_CANCELLING', 'WORKFLOW_CANCELLED', 'STREAM_END'], 'nothing started, nothing was answered');
      const { rows: [written] } = await gateway().sql.query(`select t.status, t.started_at,
          (select count(*)::int from usage_records u where u.task_id = t.id) as usage_rows,
          (select count(*)::int from token_reservations r where r.task_id = t.id) as reservations
        from tasks t where t.id = $1`, [taskId]);
      assert.deepEqual(written, { status: 'CANCELLED', started_at: null, usage_rows: 0, reservations: 0 });
    } finally {
      await hold.release();
    }
  });

  it('control routes answer 404 for an unknown task and 400 for a bad reason', async () => {
    const unknown = await gateway().request('POST', '/api/v1/tasks/3f1b6a4e-1111-4222-8333-944455556666/pause');
    assert.equal(unknown.status, 404);
    const taskId = await submit({});
    const bad = await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`, { reason: 42 });
    assert.equal(bad.status, 400);
    await waitForTask(gateway(), taskId);
  });
});

describe('cancel while queued', () => {
  // Two workers: one for tasks started on arrival, one for tasks taken from the queue.
  const gateway = useGateway({ env: { WORKER_CONCURRENCY: '2', TENANT_WORKER_SHARE: '1' } });
  const occupyWorkers = async (delayMs: number) => {
    const direct = await gateway().request('POST', '/api/v1/tasks', { query: 'occupy the direct worker', context: { mock_delay_ms: delayMs } });
    const fromQueue = await gateway().request('POST', '/api/v1/tasks', { query: 'occupy the queue worker', context: { mock_delay_ms: delayMs } });
    assert.equal(await queueOf(gateway(), direct.body.task_id), null, 'the free worker took the first task at once');
    assert.equal(await queueOf(gateway(), fromQueue.body.task_id), 'agentgate-tasks', 'the next one went through the queue');
    await waitFor('the queued task to start', async () => (await gateway().request('GET', `/api/v1/tasks/${fromQueue.body.task_id}`)).body.status === 'TASK_STATUS_RUNNING' || undefined);
    return { body: { task_id: fromQueue.body.task_id } };
  };

  it('a queued task is cancelled at once and never runs', async () => {
    const blocker = await occupyWorkers(3000);
    const queued = await gateway().request('POST', '/api/v1/tasks', { query: 'wait in line' });
    const taskId = queued.body.task_id;
    assert.equal(await queueOf(gateway(), taskId), 'agentgate-tasks', 'with both workers busy, it waits in the queue');
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_QUEUED');
    const paused = await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`);
    assert.equal(paused.status, 202, 'a queued task can be paused (held before it starts)');
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED');
    const cancelled = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'TASK_STATUS_CANCELLED');
    await waitForTask(gateway(), blocker.body.task_id);
    assert.equal(await workflowStatus(gateway(), taskId), 'CANCELLED', 'the engine will never start it');
    const task = await gateway().request('GET', `/api/v1/tasks/${taskId}`);
    assert.equal(task.body.status, 'TASK_STATUS_CANCELLED');
    const { rows } = await gateway().sql.query('select type from task_events where task_id = $1 order by seq', [taskId]);
    assert.deepEqual(rows.map((row) => row.type), ['WORKFLOW_PAUSING', 'WORKFLOW_CANCELLING', 'WORKFLOW_CANCELLED', 'STREAM_END']);
  });

  it('a queued task paused and resumed waits its turn, then runs once', async () => {
    const blocker = await occupyWorkers(2000);
    const queued = await gateway().request('POST', '/api/v1/tasks', { query: 'wait in line' });
    const taskId = queued.body.task_id;
    assert.equal(await queueOf(gateway(), taskId), 'agentgate-tasks');
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`)).status, 202);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`)).status, 202);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_QUEUED', 'resumed before it started, it is queued again');
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    await waitForTask(gateway(), blocker.body.task_id);
    const types = (await eventTypes(gateway(), taskId)).map((event) => event.type);
    assert.equal(types.filter((type) => type === 'LLM_OUTPUT').length, 1, 'answered once');
    assert.deepEqual(types.slice(0, 3), ['WORKFLOW_PAUSING', 'WORKFLOW_RESUMED', 'WORKFLOW_STARTED'], 'it did not start while paused');
  });
});
