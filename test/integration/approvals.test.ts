import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, before, test } from 'node:test';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const DEVELOPMENT_USER = '00000000-0000-0000-0000-000000000002';
const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

/** A simple task (no planning before the gate) unless `mode` says otherwise (null: the default mode). */
async function submitNeedingApproval(gateway: Gateway, headers: Record<string, string> = {}, query = 'delete the old backups', mode: string | null = 'simple'): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query, mode: mode ?? undefined, context: { require_approval: true, mock_delay_ms: 100 } }, headers);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id;
}

async function events(gateway: Gateway, taskId: string): Promise<Array<{ type: string; agent_id: string | null; message: string; payload: any }>> {
  return (await gateway.sql.query('select type, agent_id, message, payload from task_events where task_id = $1 order by seq', [taskId])).rows;
}

/** The approval the task asked for, once its workflow has parked to wait for it (holding no worker). */
async function waitForParkedApproval(gateway: Gateway, taskId: string): Promise<string> {
  const requested = await waitFor(`task ${taskId} to ask for approval`, async () =>
    (await events(gateway, taskId)).find((event) => event.type === 'APPROVAL_REQUESTED'));
  await waitFor(`task ${taskId} to park`, async () => {
    const { rows } = await gateway.sql.query(`select t.parked_at_step, w.status from tasks t join dbos.workflow_status w on w.workflow_uuid = t.id::text where t.id = $1`, [taskId]);
    return rows[0]?.parked_at_step !== null && rows[0]?.status === 'SUCCESS' ? true : undefined;
  });
  return requested.payload.approval_id;
}

const decide = (gateway: Gateway, taskId: string, approvalId: string, decision: Record<string, unknown>, headers: Record<string, string> = {}) =>
  gateway.request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: approvalId, ...decision }, headers);

const approvalStatus = async (gateway: Gateway, approvalId: string) =>
  (await gateway.sql.query('select status from approvals where id = $1', [approvalId])).rows[0]?.status;

const countOf = (list: Array<{ type: string }>, type: string) => list.filter((event) => event.type === type).length;

describe('approvals', () => {
  const gateway = useGateway({ env: { APPROVAL_SWEEP_INTERVAL_MS: '200' } });

  it('a task that asks for approval waits for it, is listed, and completes once approved', async () => {
    const taskId = await submitNeedingApproval(gateway(), {}, 'delete the old backups', null);
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    const requested = (await events(gateway(), taskId)).find((event) => event.type === 'APPROVAL_REQUESTED')!;
    assert.match(requested.message, new RegExp(approvalId));
    assert.equal(typeof requested.payload.action, 'object', 'the action to approve (the plan, or the query of a simple task)');
    assert.ok(Date.parse(requested.payload.expires_at) > Date.now() + 60_000, 'expires in APPROVAL_TIMEOUT_SECONDS (30 min)');
    await sleep(1_000);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_RUNNING', 'it waits');

    const listed = await gateway().request('GET', '/api/v1/approvals?status=pending');
    assert.equal(listed.status, 200, listed.text);
    const item = listed.body.approvals.find((approval: any) => approval.approval_id === approvalId);
    assert.ok(item, 'the pending approval is listed');
    assert.deepEqual({ ...item, created_at: undefined, expires_at: undefined }, {
      approval_id: approvalId, workflow_id: taskId, requested_by: DEVELOPMENT_USER, status: 'pending', reason: requested.payload.reason,
      action: requested.payload.action, tools: [], needs_other_approver: false, modified_action: null, feedback: null, decided_by: null,
      approved_by_note: null, created_at: undefined, expires_at: undefined, decided_at: null,
    });
    assert.ok(listed.body.total >= 1);

    const decided = await decide(gateway(), taskId, approvalId, { approved: true, feedback: 'go ahead', modified_action: { note: 'only backups older than a year' } });
    assert.equal(decided.status, 200, decided.text);
    assert.deepEqual(decided.body, { status: 'sent', success: true, message: 'Approval approved', workflow_id: taskId, run_id: taskId, approval_id: approvalId });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    const history = await events(gateway(), taskId);
    const decision = history.find((event) => event.type === 'APPROVAL_DECISION')!;
    assert.deepEqual(decision.payload, { approval_id: approvalId, approved: true, feedback: 'go ahead', decided_by: DEVELOPMENT_USER, approved_by_note: null });
    const types = history.map((event) => event.type);
    assert.ok(types.indexOf('APPROVAL_REQUESTED') < types.indexOf('APPROVAL_DECISION'));
    assert.ok(types.indexOf('APPROVAL_DECISION') < types.indexOf('WORKFLOW_COMPLETED'));
    assert.deepEqual([countOf(history, 'WORKFLOW_STARTED'), countOf(history, 'WORKFLOW_COMPLETED'), countOf(history, 'STREAM_END')], [1, 1, 1]);

    const approved = await gateway().request('GET', '/api/v1/approvals?status=approved');
    const record = approved.body.approvals.find((approval: any) => approval.approval_id === approvalId);
    assert.deepEqual(record.modified_action, { note: 'only backups older than a year' });
    assert.equal(record.feedback, 'go ahead');
    assert.ok(!Number.isNaN(Date.parse(record.decided_at)));
    const pending = await gateway().request('GET', '/api/v1/approvals');
    assert.ok(!pending.body.approvals.some((approval: any) => approval.approval_id === approvalId), 'pending is the default filter');
  });

  it('a denied approval fails the task with the feedback; the decider is the caller, what they sent as approved_by a note', async () => {
    const taskId = await submitNeedingApproval(gateway());
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    const decided = await decide(gateway(), taskId, approvalId, { approved: false, feedback: 'too risky', approved_by: 'security-team', run_id: 'run-7' });
    assert.equal(decided.status, 200, decided.text);
    assert.equal(decided.body.run_id, 'run-7');
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.equal(task.error, 'approval denied: too risky');
    const decision = (await events(gateway(), taskId)).find((event) => event.type === 'APPROVAL_DECISION')!;
    assert.deepEqual(decision.payload, { approval_id: approvalId, approved: false, feedback: 'too risky', decided_by: DEVELOPMENT_USER, approved_by_note: 'security-team' });
    const { rows: [stored] } = await gateway().sql.query('select decided_by, approved_by_note from approvals where id = $1', [approvalId]);
    assert.deepEqual(stored, { decided_by: DEVELOPMENT_USER, approved_by_note: 'security-team' });
    const { rows } = await gateway().sql.query(`select count(*)::int as count from usage_records where task_id = $1`, [taskId]);
    assert.equal(rows[0].count, 0, 'no model was called for a denied simple task');
  });

  it('bad decisions answer 400, unknown or mismatched ids the same 404, a second decision 409; the approval stays as it was', async () => {
    const taskId = await submitNeedingApproval(gateway());
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    const bad: Array<[unknown, RegExp]> = [
      [{ approval_id: approvalId, approved: true }, /workflow_id is required/],
      [{ workflow_id: taskId, approved: true }, /approval_id is required/],
      [{ workflow_id: taskId, approval_id: approvalId }, /approved is required/],
      [{ workflow_id: taskId, approval_id: approvalId, approved: 'yes' }, /approved/],
      [{ workflow_id: 42, approval_id: approvalId, approved: true }, /workflow_id/],
      [{ workflow_id: taskId, approval_id: approvalId, approved: true, feedback: 7 }, /feedback/],
    ];
    for (const [body, error] of bad) {
      const answer = await gateway().request('POST', '/api/v1/approvals/decision', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.match(answer.body.error, error);
    }
    const malformed = await gateway().requestRaw('POST', '/api/v1/approvals/decision', '{"workflow_id":', { 'content-type': 'application/json' });
    assert.deepEqual([malformed.status, malformed.body], [400, { error: 'invalid JSON body' }]);
    const bodiless = await gateway().requestRaw('POST', '/api/v1/approvals/decision', '', { 'content-type': 'application/json' });
    assert.deepEqual([bodiless.status, bodiless.body], [400, { error: 'invalid body: must be object' }], 'a body-less request with a JSON content type is refused as a missing body');
    const badFilter = await gateway().request('GET', '/api/v1/approvals?status=maybe');
    assert.equal(badFilter.status, 400);

    const otherTask = await submitNeedingApproval(gateway());
    const otherApproval = await waitForParkedApproval(gateway(), otherTask);
    const notFound = [404, { error: 'Approval not found' }];
    const mismatched = await decide(gateway(), taskId, otherApproval, { approved: true });
    assert.deepEqual([mismatched.status, mismatched.body], notFound, 'an approval of another task is not one of this task\'s');
    const unknownTask = await decide(gateway(), randomUUID(), approvalId, { approved: true });
    assert.deepEqual([unknownTask.status, unknownTask.body], notFound);
    const unknownApproval = await decide(gateway(), taskId, randomUUID(), { approved: true });
    assert.deepEqual([unknownApproval.status, unknownApproval.body], notFound);
    assert.equal(await approvalStatus(gateway(), approvalId), 'pending');

    assert.equal((await decide(gateway(), taskId, approvalId, { approved: true })).status, 200);
    const twice = await decide(gateway(), taskId, approvalId, { approved: false });
    assert.deepEqual([twice.status, twice.body], [409, { error: 'approval is already approved' }]);
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    assert.equal((await decide(gateway(), otherTask, otherApproval, { approved: true })).status, 200);
    assert.equal((await waitForTask(gateway(), otherTask)).status, 'TASK_STATUS_COMPLETED');
  });

  it('a task waiting for approval can be cancelled; its approval is then closed', async () => {
    const taskId = await submitNeedingApproval(gateway());
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    const cancelled = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, { reason: 'not needed' });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'TASK_STATUS_CANCELLED');
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_CANCELLED');
    await waitFor('the sweep to close the approval', async () => await approvalStatus(gateway(), approvalId) === 'denied' || undefined);
    const late = await decide(gateway(), taskId, approvalId, { approved: true });
    assert.equal(late.status, 409);
    assert.equal(countOf(await events(gateway(), taskId), 'WORKFLOW_CANCELLED'), 1);
  });

  it('a pause while it waits holds the task after the decision until it is resumed', async () => {
    const taskId = await submitNeedingApproval(gateway());
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`)).status, 202);
    assert.equal((await decide(gateway(), taskId, approvalId, { approved: true })).status, 200);
    await sleep(500);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED', 'still held by the pause');
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`)).status, 202);
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
  });
});

describe('who sees and decides approvals', () => {
  const gateway = useGateway({ env: authEnv });
  let alice: Account;
  let carol: Account;
  let frank: Account;
  let dave: Account;
  let bob: Account;

  before(async () => {
    alice = await registerAccount(gateway(), 'alice');
    carol = await addMember(gateway(), alice, 'carol');
    frank = await addMember(gateway(), alice, 'frank');
    dave = await addMember(gateway(), alice, 'dave', 'admin');
    bob = await registerAccount(gateway(), 'bob');
  });

  it('another member and another tenant get the 404 of an unknown id, no credential 401; the requester decides what they asked for', async () => {
    const taskId = await submitNeedingApproval(gateway(), withKey(carol));
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    for (const intruder of [frank, bob]) {
      const foreign = await decide(gateway(), taskId, approvalId, { approved: true }, withKey(intruder));
      const unknown = await decide(gateway(), taskId, randomUUID(), { approved: true }, withKey(intruder));
      assert.deepEqual([foreign.status, foreign.body], [404, { error: 'Approval not found' }]);
      assert.deepEqual([unknown.status, unknown.body], [foreign.status, foreign.body], 'no existence oracle');
    }
    assert.equal((await decide(gateway(), taskId, approvalId, { approved: true })).status, 401);
    assert.equal(await approvalStatus(gateway(), approvalId), 'pending', 'nobody decided');
    for (const intruder of [frank, bob]) {
      const listed = await gateway().request('GET', '/api/v1/approvals?status=all', undefined, withKey(intruder));
      assert.deepEqual([listed.status, listed.body.approvals, listed.body.total], [200, [], 0]);
    }
    const own = await gateway().request('GET', '/api/v1/approvals', undefined, withKey(carol));
    assert.deepEqual(own.body.approvals.map((approval: any) => approval.approval_id), [approvalId]);

    const decided = await decide(gateway(), taskId, approvalId, { approved: true }, withKey(carol));
    assert.equal(decided.status, 200, 'an approval the task asked for itself guards no dangerous tool: its requester may give it');
    assert.equal((await waitForTask(gateway(), taskId, 20_000, withKey(carol))).status, 'TASK_STATUS_COMPLETED');
  });

  it('an admin sees the tenant\'s approvals, not another tenant\'s, and decides them as themselves', async () => {
    const taskId = await submitNeedingApproval(gateway(), withKey(carol));
    const approvalId = await waitForParkedApproval(gateway(), taskId);
    const elsewhere = await submitNeedingApproval(gateway(), withKey(bob));
    const elsewhereApproval = await waitForParkedApproval(gateway(), elsewhere);
    const listed = await gateway().request('GET', '/api/v1/approvals', undefined, withKey(dave));
    assert.deepEqual(listed.body.approvals.map((approval: any) => [approval.approval_id, approval.requested_by]), [[approvalId, carol.userId]]);
    const foreign = await decide(gateway(), elsewhere, elsewhereApproval, { approved: true }, withKey(dave));
    assert.deepEqual([foreign.status, foreign.body], [404, { error: 'Approval not found' }]);

    const decided = await decide(gateway(), taskId, approvalId, { approved: false, feedback: 'not now' }, withKey(dave));
    assert.equal(decided.status, 200, decided.text);
    const task = await waitForTask(gateway(), taskId, 20_000, withKey(carol));
    assert.deepEqual([task.status, task.error], ['TASK_STATUS_FAILED', 'approval denied: not now']);
    const { rows: [stored] } = await gateway().sql.query('select decided_by from approvals where id = $1', [approvalId]);
    assert.equal(stored.decided_by, dave.userId);
    assert.equal((await decide(gateway(), elsewhere, elsewhereApproval, { approved: true }, withKey(bob))).status, 200);
  });

  it('lists newest first, a page at a time', async () => {
    const dave = await registerAccount(gateway(), 'dave');
    const taskIds = [];
    for (let index = 0; index < 3; index++) {
      const taskId = await submitNeedingApproval(gateway(), withKey(dave), `task ${index}`);
      await waitForParkedApproval(gateway(), taskId);
      taskIds.push(taskId);
    }
    const page = await gateway().request('GET', '/api/v1/approvals?limit=2&offset=1', undefined, withKey(dave));
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.total, 3);
    assert.deepEqual(page.body.approvals.map((approval: any) => approval.workflow_id), [taskIds[1], taskIds[0]]);
  });
});

test('an approval left undecided past APPROVAL_TIMEOUT_SECONDS is denied and the task fails', async (t) => {
  const gateway = await startGateway(t, { env: { APPROVAL_TIMEOUT_SECONDS: '1', APPROVAL_SWEEP_INTERVAL_MS: '200' } });
  const taskId = await submitNeedingApproval(gateway);
  const task = await waitForTask(gateway, taskId);
  assert.equal(task.status, 'TASK_STATUS_FAILED');
  assert.equal(task.error, 'approval denied: approval timeout');
  const decision = (await events(gateway, taskId)).find((event) => event.type === 'APPROVAL_DECISION')!;
  assert.equal(decision.payload.approved, false);
  assert.equal(decision.payload.feedback, 'approval timeout');
});

test('kill -9 while a task waits for approval: after a restart the approval still completes it, once', async (t) => {
  const gateway = await startGateway(t);
  const taskId = await submitNeedingApproval(gateway);
  const approvalId = await waitForParkedApproval(gateway, taskId);
  await gateway.kill('SIGKILL');
  await gateway.restart();
  await sleep(500);
  assert.equal((await gateway.request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_RUNNING', 'the restart did not end the wait');
  const decided = await decide(gateway, taskId, approvalId, { approved: true });
  assert.equal(decided.status, 200, decided.text);
  assert.equal((await waitForTask(gateway, taskId)).status, 'TASK_STATUS_COMPLETED');
  const history = await events(gateway, taskId);
  const finalOutputs = history.filter((event) => event.type === 'LLM_OUTPUT' && event.agent_id === 'final_output').length;
  assert.deepEqual([countOf(history, 'APPROVAL_REQUESTED'), countOf(history, 'APPROVAL_DECISION'), countOf(history, 'WORKFLOW_COMPLETED'), finalOutputs], [1, 1, 1, 1]);
  const { rows } = await gateway.sql.query('select count(*)::int as count from approvals where task_id = $1', [taskId]);
  assert.equal(rows[0].count, 1, 'one approval was asked for');
});

describe('tasks waiting for approval hold no worker', () => {
  const gateway = useGateway({ env: { WORKER_CONCURRENCY: '2', TENANT_WORKER_SHARE: '1' } });

  it('with two workers, three tasks wait for approval and a fourth still completes', async () => {
    const waiting = [];
    for (let index = 0; index < 3; index++) waiting.push(await submitNeedingApproval(gateway(), {}, `waiting ${index}`));
    const approvals = await Promise.all(waiting.map((taskId) => waitForParkedApproval(gateway(), taskId)));
    const ordinary = await gateway().request('POST', '/api/v1/tasks', { query: 'ordinary task', context: { mock_delay_ms: 100 } });
    assert.equal((await waitForTask(gateway(), ordinary.body.task_id, 15_000)).status, 'TASK_STATUS_COMPLETED');
    for (const taskId of waiting) assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_RUNNING');
    await Promise.all(waiting.map((taskId, index) => decide(gateway(), taskId, approvals[index], { approved: true })));
    for (const taskId of waiting) assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
  });
});
