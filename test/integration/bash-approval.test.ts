import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bashSandboxMissing } from '../helpers/bash-sandbox.ts';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

// Without authentication (skip-auth development) there is one identity, which may approve its own tasks.
describe('bash, once enabled, runs only after a human approves', { skip: bashSandboxMissing || undefined }, () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto', TOOLS_BASH_ENABLED: '1' } });

  it('a developer task that may run bash waits for approval, then runs the command', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', {
      query: 'list the directory', context: { role: 'developer', mock_tool_calls: [{ tool: 'bash', args: { command: 'echo approved-run' } }] },
    });
    assert.equal(submitted.status, 200, submitted.text);
    const taskId = submitted.body.task_id as string;
    const requested = await waitFor('APPROVAL_REQUESTED', async () => (await gateway().sql.query(
      `select payload from task_events where task_id = $1 and type = 'APPROVAL_REQUESTED'`, [taskId])).rows[0]);
    assert.match(requested.payload.reason, /bash commands on the server/);
    const before = await gateway().sql.query(`select count(*)::int as count from task_events where task_id = $1 and type like 'TOOL_%'`, [taskId]);
    assert.equal(before.rows[0].count, 0, 'nothing ran before the decision');
    const decided = await gateway().request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: requested.payload.approval_id, approved: true });
    assert.equal(decided.status, 200, decided.text);
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows } = await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'`, [taskId]);
    assert.match(JSON.stringify(rows[0].payload.output), /approved-run/);
  });

  it('a generalist task is not offered bash and needs no approval', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'hello', context: { role: 'generalist', mock_tool_calls: [{ tool: 'bash', args: { command: 'id' } }] } });
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows } = await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'`, [submitted.body.task_id]);
    assert.equal(rows[0].payload.refused, true);
  });
});
