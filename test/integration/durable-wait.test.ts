import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, test } from 'node:test';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

// The one durable wait (issue 27, scope 0): a task waits for named signals, parks while any is open, and the
// delivery of the last one wakes it.

async function submitWaitingForApproval(gateway: Gateway): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: 'wait for a human', mode: 'simple', context: { require_approval: true } });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id;
}

const openWaits = async (gateway: Gateway, taskId: string): Promise<string[]> =>
  (await gateway.sql.query('select signal from task_waits where task_id = $1 order by signal', [taskId])).rows.map((row) => row.signal);

/** The approval the task waits for, once its workflow has parked (ended, holding no worker). */
async function parkedApproval(gateway: Gateway, taskId: string): Promise<string> {
  return waitFor(`task ${taskId} to park for its approval`, async () => {
    const { rows } = await gateway.sql.query(`
      select a.id from tasks t join approvals a on a.task_id = t.id join dbos.workflow_status w on w.workflow_uuid = t.id::text
      where t.id = $1 and t.parked_at_step is not null and w.status = 'SUCCESS'`, [taskId]);
    return rows[0]?.id;
  });
}

const decide = (gateway: Gateway, taskId: string, approvalId: string) =>
  gateway.request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: approvalId, approved: true });

describe('one durable wait', () => {
  const gateway = useGateway();

  it('each signal is a wait of its own; delivering one leaves the task parked on the other; an ended task waits for nothing', async () => {
    const taskId = await submitWaitingForApproval(gateway());
    const approvalId = await parkedApproval(gateway(), taskId);
    assert.deepEqual(await openWaits(gateway(), taskId), [`approval:${approvalId}`]);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`)).status, 202);
    assert.deepEqual(await openWaits(gateway(), taskId), [`approval:${approvalId}`, 'pause']);

    assert.equal((await decide(gateway(), taskId, approvalId)).status, 200);
    assert.deepEqual(await openWaits(gateway(), taskId), ['pause']);
    await sleep(500);
    const { rows } = await gateway().sql.query('select parked_at_step from tasks where id = $1', [taskId]);
    assert.notEqual(rows[0].parked_at_step, null, 'the open pause keeps the workflow parked');

    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`)).status, 202);
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    assert.deepEqual(await openWaits(gateway(), taskId), []);
  });

  it('a pause that ends in a cancel leaves no wait behind', async () => {
    const taskId = await submitWaitingForApproval(gateway());
    await parkedApproval(gateway(), taskId);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`)).status, 202);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`)).status, 200);
    assert.deepEqual(await openWaits(gateway(), taskId), []);
  });
});

test('a delivery whose wake was lost to a crash is woken by the sweep when a process starts', async (t) => {
  const gateway = await startGateway(t);
  const taskId = await submitWaitingForApproval(gateway);
  const approvalId = await parkedApproval(gateway, taskId);
  await gateway.kill('SIGKILL');
  // What a decision commits (task-state/waits.ts deliverSignal) before it wakes the task: the crash took the wake.
  await gateway.sql.query(`update approvals set status = 'approved', decided_by = 'test', decided_at = now() where id = $1`, [approvalId]);
  await gateway.sql.query('delete from task_waits where task_id = $1', [taskId]);
  await gateway.restart();
  assert.equal((await waitForTask(gateway, taskId)).status, 'TASK_STATUS_COMPLETED');
  const { rows } = await gateway.sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'WORKFLOW_COMPLETED'`, [taskId]);
  assert.equal(rows[0].count, 1);
});
