import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it, test } from 'node:test';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

type EventRow = { type: string; agent_id: string | null; payload: any };

const eventsOf = async (gateway: Gateway, taskId: string): Promise<EventRow[]> =>
  (await gateway.sql.query('select type, agent_id, payload from task_events where task_id = $1 order by seq', [taskId])).rows;

/** The `count`-th approval the task asked for, once its workflow has parked to wait for it. */
async function parkedApproval(gateway: Gateway, taskId: string, count = 1): Promise<{ approval_id: string; reason: string; tools: string[]; action: any }> {
  const requested = await waitFor(`approval ${count} of task ${taskId}`, async () =>
    (await eventsOf(gateway, taskId)).filter((event) => event.type === 'APPROVAL_REQUESTED')[count - 1], 30_000);
  await waitFor(`task ${taskId} to park`, async () => {
    const { rows } = await gateway.sql.query(`select t.parked_at_step, w.status from tasks t join dbos.workflow_status w on w.workflow_uuid = t.id::text where t.id = $1`, [taskId]);
    return rows[0]?.parked_at_step !== null && rows[0]?.status === 'SUCCESS' ? true : undefined;
  }, 30_000);
  return requested.payload;
}

const decide = (gateway: Gateway, taskId: string, approvalId: string, decision: Record<string, unknown>, headers: Record<string, string> = {}) =>
  gateway.request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: approvalId, ...decision }, headers);

async function submit(gateway: Gateway, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', body, headers);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id;
}

/** Short, so that an approval can wait longer than the task's whole time limit. */
const TASK_TIMEOUT_SECONDS = 15;

const toolEvents = async (gateway: Gateway, taskId: string) => (await eventsOf(gateway, taskId)).filter((event) => event.type.startsWith('TOOL_'));

/** A one-agent plan that suggests the given tools (none by default), below the complexity threshold. */
const quietPlan = (suggestedTools: string[] = []) => ({
  complexity_score: 0.1, execution_strategy: 'sequential',
  subtasks: [{ id: 'compute', description: 'Compute the answer', ...(suggestedTools.length > 0 ? { suggested_tools: suggestedTools } : {}) }],
});

function templatesDirectory(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'agentgate-templates-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  writeFileSync(path.join(directory, 'write-note.yaml'), [
    'name: write-note', 'version: "1.0.0"', 'description: Writes the query to a file.', 'nodes:',
    '  - id: write', '    kind: tool', '    tool: file_write', '    args:', '      path: note.txt', '      content: "${query}"',
    'output: write',
  ].join('\n'));
  writeFileSync(path.join(directory, 'sum.yaml'), [
    'name: sum', 'version: "1.0.0"', 'description: Adds two numbers.', 'nodes:',
    '  - id: total', '    kind: tool', '    tool: calculator', '    args:', '      expression: "19 * 21"', 'output: total',
  ].join('\n'));
  return directory;
}

describe('with APPROVAL_ENABLED, approval is judged by the tools agents are offered', () => {
  const gateway = useGateway({ env: { APPROVAL_ENABLED: '1', DEFAULT_TASK_MODE: 'auto', TEMPLATES_DIR: templatesDirectory() } });

  it('a plan that suggests no tools still waits for approval before python_executor runs', { timeout: 120_000 }, async () => {
    const taskId = await submit(gateway(), {
      query: 'What is six times seven?', mode: 'standard',
      context: { role: 'data_analytics', mock_plan: quietPlan(), mock_tool_calls: [{ tool: 'python_executor', args: { code: 'print(6*7)' } }] },
    });
    const approval = await parkedApproval(gateway(), taskId);
    assert.deepEqual([approval.reason, approval.tools], ['its agents are offered dangerous tools: python_executor', ['python_executor']]);
    const planned = (await eventsOf(gateway(), taskId)).find((event) => event.type === 'PROGRESS' && event.payload?.stage === 'planned');
    assert.deepEqual(planned?.payload.plan.map((step: any) => step.suggested_tools ?? []), [[]], 'the plan suggested nothing');
    assert.deepEqual(await toolEvents(gateway(), taskId), [], 'nothing ran before the decision');

    assert.equal((await decide(gateway(), taskId, approval.approval_id, { approved: true })).status, 200);
    const task = await waitForTask(gateway(), taskId, 90_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const observed = (await toolEvents(gateway(), taskId)).find((event) => event.type === 'TOOL_OBSERVATION');
    assert.equal(observed?.payload.output.stdout, '42\n');
  });

  it('denied, the task fails and no tool ran', async () => {
    const taskId = await submit(gateway(), {
      query: 'Write the file', mode: 'standard',
      context: { role: 'developer', mock_plan: quietPlan(), mock_tool_calls: [{ tool: 'file_write', args: { path: 'a.txt', content: 'x' } }] },
    });
    const approval = await parkedApproval(gateway(), taskId);
    assert.deepEqual(approval.tools, ['file_write', 'file_edit', 'file_delete', 'bash', 'python_executor']);
    assert.equal((await decide(gateway(), taskId, approval.approval_id, { approved: false, feedback: 'no writes' })).status, 200);
    const task = await waitForTask(gateway(), taskId);
    assert.deepEqual([task.status, task.error], ['TASK_STATUS_FAILED', 'approval denied: no writes']);
    assert.deepEqual(await toolEvents(gateway(), taskId), []);
  });

  it('agents offered no dangerous tool need no approval, whatever the plan suggests', async () => {
    const taskId = await submit(gateway(), {
      query: 'What is six times seven?', mode: 'standard',
      context: { mock_plan: quietPlan(['python_executor', 'bash']), mock_tool_calls: [{ tool: 'python_executor', args: { code: 'print(1)' } }] },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    assert.ok(!events.some((event) => event.type === 'APPROVAL_REQUESTED'), 'no approval was asked for');
    const refused = events.find((event) => event.type === 'TOOL_OBSERVATION');
    assert.equal(refused?.payload.error, 'tool python_executor is not allowed for role generalist', 'the generalist is not offered python');
  });

  it('a template whose node runs a dangerous tool waits for approval, as does one whose task asks for it', async () => {
    const taskId = await submit(gateway(), { query: 'remember this', context: { template: 'write-note', disable_ai: true } });
    const approval = await parkedApproval(gateway(), taskId);
    assert.deepEqual([approval.reason, approval.tools, approval.action], [
      'its agents are offered dangerous tools: file_write', ['file_write'], { template: 'write-note', version: '1.0.0', query: 'remember this' },
    ]);
    assert.deepEqual(await toolEvents(gateway(), taskId), [], 'the node did not run before the decision');
    assert.equal((await decide(gateway(), taskId, approval.approval_id, { approved: true })).status, 200);
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    const { rows } = await gateway().sql.query(`select f.path from session_files f join tasks t on t.session_id = f.session_id where t.id = $1`, [taskId]);
    assert.deepEqual(rows, [{ path: 'note.txt' }]);

    const asked = await submit(gateway(), { query: 'add', context: { template: 'sum', disable_ai: true, require_approval: true } });
    const askedApproval = await parkedApproval(gateway(), asked);
    assert.deepEqual([askedApproval.reason, askedApproval.tools], ['the task asks for approval (context.require_approval)', []]);
    assert.equal((await decide(gateway(), asked, askedApproval.approval_id, { approved: true })).status, 200);
    assert.equal((await waitForTask(gateway(), asked)).result, '399');
  });
});

test('inside the tool loop, a dangerous call no approval covers waits for one, not counted against the deadline: denied, the call is refused; approved, it runs', { timeout: 240_000 }, async (t) => {
  // Approvals turned on while the task ran: the plan's approval (asked for by the task) names no tool.
  const env = { DEFAULT_TASK_MODE: 'auto', APPROVAL_SWEEP_INTERVAL_MS: '200', TASK_TIMEOUT_SECONDS: String(TASK_TIMEOUT_SECONDS) };
  const first = await startGateway(t, { env });
  const taskId = await submit(first, {
    query: 'Compute, then write it down', mode: 'standard',
    context: {
      role: 'developer', require_approval: true, mock_plan: quietPlan(),
      mock_tool_calls: [{ tool: 'python_executor', args: { code: 'print(6*7)' } }, { tool: 'file_write', args: { path: 'answer.txt', content: '42' } }],
    },
  });
  const planApproval = await parkedApproval(first, taskId);
  assert.deepEqual(planApproval.tools, [], 'approvals were off: the plan\'s approval covers no tool');
  assert.equal((await first.request('POST', `/api/v1/tasks/${taskId}/pause`)).status, 202);
  assert.equal((await decide(first, taskId, planApproval.approval_id, { approved: true })).status, 200);
  await first.kill('SIGTERM');
  const second = await startGateway(t, { databaseUrl: first.databaseUrl, env: { ...env, APPROVAL_ENABLED: '1' } });
  assert.equal((await second.request('POST', `/api/v1/tasks/${taskId}/resume`)).status, 202);

  const python = await parkedApproval(second, taskId, 2);
  assert.deepEqual([python.reason, python.tools, python.action], [
    'agent compute calls python_executor, which no approval of this task covers', ['python_executor'], { tool: 'python_executor', args: { code: 'print(6*7)' } },
  ]);
  assert.deepEqual(await toolEvents(second, taskId), [], 'nothing of the call ran before the decision');
  // The decision comes later than the task's whole time limit: the wait must not count.
  await sleep((TASK_TIMEOUT_SECONDS + 2) * 1000);
  assert.equal((await decide(second, taskId, python.approval_id, { approved: false, feedback: 'no code today' })).status, 200);

  const write = await parkedApproval(second, taskId, 3);
  assert.deepEqual(write.tools, ['file_write']);
  const afterDenial = await toolEvents(second, taskId);
  assert.deepEqual(afterDenial.map((event) => [event.type, event.payload.tool, event.payload.error]), [
    ['TOOL_OBSERVATION', 'python_executor', 'approval denied: no code today'],
  ], 'the denied call was refused with the reason; the next call waits');
  assert.equal((await decide(second, taskId, write.approval_id, { approved: true })).status, 200);

  const task = await waitForTask(second, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const tools = await toolEvents(second, taskId);
  assert.deepEqual(tools.map((event) => [event.type, event.payload.tool]), [
    ['TOOL_OBSERVATION', 'python_executor'], ['TOOL_INVOKED', 'file_write'], ['TOOL_OBSERVATION', 'file_write'],
  ]);
  const { rows } = await second.sql.query(`select tool from tool_calls where task_id = $1`, [taskId]);
  assert.deepEqual(rows, [{ tool: 'file_write' }], 'python never ran');
  const decisions = (await eventsOf(second, taskId)).filter((event) => event.type === 'APPROVAL_DECISION').map((event) => event.payload.approved);
  assert.deepEqual(decisions, [true, false, true]);
  const { rows: [waited] } = await second.sql.query('select approval_wait_ms from tasks where id = $1', [taskId]);
  assert.ok(Number(waited.approval_wait_ms) >= (TASK_TIMEOUT_SECONDS + 2) * 1000, `${waited.approval_wait_ms} ms waited`);
});

describe('approvals of dangerous tools need an approver other than the requester', () => {
  const gateway = useGateway({
    env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', APPROVAL_ENABLED: '1', DEFAULT_TASK_MODE: 'auto', APPROVAL_APPROVER_ROLES: 'owner' },
  });
  let owner: Account;
  let admin: Account;
  let otherOwner: Account;

  before(async () => {
    owner = await registerAccount(gateway(), 'owner');
    admin = await addMember(gateway(), owner, 'admin', 'admin');
    otherOwner = await addMember(gateway(), owner, 'second-owner', 'admin');
    await gateway().sql.query(`update memberships set role = 'owner' where user_id = $1 and tenant_id = $2`, [otherOwner.userId, owner.tenantId]);
  });

  it('with APPROVAL_APPROVER_ROLES=owner an admin\'s dangerous task waits for an owner: the admin cannot approve it, another owner can', async () => {
    const adminToken = { authorization: `Bearer ${admin.accessToken}`, 'x-tenant-id': owner.tenantId };
    const taskId = await submit(gateway(), {
      query: 'Write the file', mode: 'standard',
      context: { role: 'developer', mock_plan: quietPlan(), mock_tool_calls: [{ tool: 'file_write', args: { path: 'a.txt', content: 'x' } }] },
    }, adminToken);
    const approval = await parkedApproval(gateway(), taskId);
    const own = await decide(gateway(), taskId, approval.approval_id, { approved: true }, adminToken);
    assert.equal(own.status, 403, 'the requester may not approve it');
    const adminsList = await gateway().request('GET', '/api/v1/approvals', undefined, withKey(admin));
    assert.deepEqual(adminsList.body.approvals.map((item: any) => item.approval_id), [approval.approval_id], 'an admin sees only their own');
    const decided = await decide(gateway(), taskId, approval.approval_id, { approved: true }, withKey(otherOwner));
    assert.equal(decided.status, 200, decided.text);
    assert.equal((await waitForTask(gateway(), taskId, 20_000, adminToken)).status, 'TASK_STATUS_COMPLETED');
  });
});
