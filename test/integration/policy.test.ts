import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { useGateway, waitFor } from '../helpers/gateway.ts';

const policyFile = path.join(os.tmpdir(), `agentgate-policy-${process.pid}.yaml`);
writeFileSync(policyFile, [
  'mode: enforce',
  'rules:',
  '  - name: dev-tenant-limits',
  '    tenants: [dev]',
  '    denied_modes: [supervisor]',
  '    max_token_budget: 5000',
  '    allowed_models: [mock-small, mock-medium]',
].join('\n'));
after(() => rmSync(policyFile, { force: true }));

describe('policy engine in enforce mode', () => {
  const gateway = useGateway({ env: { POLICY_FILE: policyFile } });

  it('denies a forbidden mode, budget or model with 403 and the reason, and writes no task', async () => {
    for (const [body, reason] of [
      [{ query: 'x', mode: 'supervisor' }, /mode supervisor is not allowed \(policy rule dev-tenant-limits\)/],
      [{ query: 'x', context: { token_budget: 9000 } }, /token budget 9000 exceeds the maximum of 5000/],
      [{ query: 'x', model_tier: 'large' }, /model mock-large is not allowed/],
    ] as const) {
      const answer = await gateway().request('POST', '/api/v1/tasks', body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.error, /^Policy denied: /);
      assert.match(answer.body.error, reason, answer.text);
    }
    const { rows } = await gateway().sql.query('select count(*)::int as count from tasks');
    assert.equal(rows[0].count, 0);
    const allowed = await gateway().request('POST', '/api/v1/tasks', { query: 'fine', mode: 'simple', model_tier: 'medium' });
    assert.equal(allowed.status, 200);
  });

  it('holds later budget writes to the same cap: PUT on a task or a session budget over it is a 403 and stores nothing', async () => {
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'budgeted', session_id: 'policy-budget-session', context: { mock_delay_ms: 20_000 } });
    assert.equal(task.status, 200, task.text);
    const session = (await gateway().sql.query('select session_id from tasks where id = $1', [task.body.task_id])).rows[0].session_id;
    for (const [path, value] of [[`/api/v1/tasks/${task.body.task_id}/budget`, 1e9], [`/api/v1/sessions/${session}/budget`, 1e12]] as const) {
      const refused = await gateway().request('PUT', path, { token_budget: value });
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.body.error, /token budget \d+ exceeds the maximum of 5000/);
      const within = await gateway().request('PUT', path, { token_budget: 4000 });
      assert.equal(within.status, 200, within.text);
    }
    const stored = await gateway().sql.query('select t.token_budget as task, s.token_budget as session from tasks t join sessions s on s.id = t.session_id where t.id = $1', [task.body.task_id]);
    assert.deepEqual([Number(stored.rows[0].task), Number(stored.rows[0].session)], [4000, 4000]);
    await gateway().request('POST', `/api/v1/tasks/${task.body.task_id}/cancel`);
  });
  it('holds schedules to it: one whose task it forbids is a 403 at creation, and a run it forbids later is skipped, saying why', async () => {
    const refused = await gateway().request('POST', '/api/v1/schedules', { name: 'large', cron_expression: '0 7 * * *', task_query: 'x', task_context: { model_tier: 'large' } });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.error, /^Policy denied: .*model mock-large is not allowed/);
    const created = await gateway().request('POST', '/api/v1/schedules', { name: 'medium', cron_expression: '0 7 * * *', task_query: 'x', task_context: { model_tier: 'medium' } });
    assert.equal(created.status, 201, created.text);
    // The policy tightened after the schedule was made (as if the file had changed): its run is refused.
    await gateway().sql.query(`update schedules set task_context = '{"model_tier": "large"}', next_run_at = now() where id = $1`, [created.body.schedule_id]);
    const [run] = await waitFor('the refused run', async () => {
      const runs = (await gateway().request('GET', `/api/v1/schedules/${created.body.schedule_id}/runs`)).body.runs;
      return runs.length > 0 ? runs : undefined;
    });
    assert.equal(run.status, 'SKIPPED');
    assert.match(run.error_message, /^refused: Policy denied: .*model mock-large is not allowed/);
    const { rows } = await gateway().sql.query('select status, total_runs from schedules where id = $1', [created.body.schedule_id]);
    assert.deepEqual(rows[0], { status: 'ACTIVE', total_runs: 0 });
  });
});

describe('policy engine in dry-run mode', () => {
  const gateway = useGateway({ env: { POLICY_FILE: policyFile, POLICY_MODE: 'dry-run' } });

  it('lets the request through and logs what it would deny', async () => {
    const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'x', context: { token_budget: 9000 } });
    assert.equal(answer.status, 200);
    await waitFor('the dry-run log line', async () => (gateway().output().includes('policy would deny') ? true : undefined));
    assert.match(gateway().output(), /token budget 9000 exceeds the maximum of 5000/);
  });
});

const approvalPolicyFile = path.join(os.tmpdir(), `agentgate-approval-policy-${process.pid}.yaml`);
writeFileSync(approvalPolicyFile, ['mode: enforce', 'rules:', '  - name: dev-tasks-need-approval', '    tenants: [dev]', '    require_approval: true'].join('\n'));
after(() => rmSync(approvalPolicyFile, { force: true }));

describe('a policy rule that requires approval', () => {
  const gateway = useGateway({ env: { POLICY_FILE: approvalPolicyFile } });

  it('makes the tenant\'s tasks wait for a decision, naming the rule, and run once approved', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'needs a human', mode: 'simple' });
    assert.equal(submitted.status, 200, submitted.text);
    const taskId = submitted.body.task_id as string;
    const requested = await waitFor('APPROVAL_REQUESTED', async () => (await gateway().sql.query(
      `select payload from task_events where task_id = $1 and type = 'APPROVAL_REQUESTED'`, [taskId])).rows[0]);
    assert.match(requested.payload.reason, /policy rule dev-tasks-need-approval requires approval/);
    const stored = await gateway().sql.query('select options from tasks where id = $1', [taskId]);
    assert.equal(stored.rows[0].options.approval_rule, 'dev-tasks-need-approval', 'recorded by the server, not the client');
    const decided = await gateway().request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: requested.payload.approval_id, approved: true });
    assert.equal(decided.status, 200, decided.text);
    const task = await waitFor('the task to complete', async () => {
      const { body } = await gateway().request('GET', `/api/v1/tasks/${taskId}`);
      return body.status === 'TASK_STATUS_COMPLETED' ? body : undefined;
    });
    assert.match(task.result, /Mock answer to "needs a human"/);
  });
});
