import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

/** Model calls this process started, by phase (agentgate_model_calls_total). */
async function modelCallsByPhase(gateway: Gateway): Promise<Record<string, number>> {
  const text = (await gateway.request('GET', '/metrics')).body as string;
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^agentgate_model_calls_total\{phase="([^"]+)"\} (\d+)/gm)) counts[match[1]] = Number(match[2]);
  return counts;
}

test('kill -9 during a 4-agent DAG after 2 agents finished: after a restart only the other 2 call the model, and the task completes once', async (t) => {
  const gateway = await startGateway(t);
  const subtasks = ['d1', 'd2', 'd3', 'd4'].map((id) => ({ id, description: `part ${id}` }));
  const submitted = await gateway.request('POST', '/api/v1/tasks', {
    query: 'A durable team', mode: 'standard', max_concurrent_agents: 2,
    context: { mock_delay_ms: 1500, mock_plan: { complexity_score: 0.8, subtasks, execution_strategy: 'parallel' } },
  });
  assert.equal(submitted.status, 200);
  const taskId = submitted.body.task_id as string;
  // An agent has finished when the engine recorded its step (its AGENT_COMPLETED commits a moment before).
  const completedAgents = async () => (await gateway.sql.query(
    `select function_name from dbos.operation_outputs where workflow_uuid = $1 and function_name like 'agent:%' and completed_at_epoch_ms is not null`,
    [taskId])).rows.map((row) => (row.function_name as string).slice('agent:'.length));
  await waitFor('two agents to finish', async () => ((await completedAgents()).length >= 2 ? true : undefined), 30_000);
  await gateway.kill('SIGKILL');
  const finishedBefore = await completedAgents();
  assert.deepEqual(finishedBefore.toSorted(), ['d1', 'd2'], 'the first two of the plan (two slots) finished before the crash');

  await gateway.restart();
  const task = await waitForTask(gateway, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.deepEqual(await modelCallsByPhase(gateway), { agent: 2, synthesis: 1 }, 'only d3 and d4 (and the synthesis) called the model after the restart');

  const { rows: usage } = await gateway.sql.query('select agent_id from usage_records where task_id = $1 order by agent_id', [taskId]);
  assert.deepEqual(usage.map((row) => row.agent_id), ['d1', 'd2', 'd3', 'd4', 'decompose', 'synthesis'], 'one usage row per call');
  const { rows: events } = await gateway.sql.query('select type, agent_id, seq from task_events where task_id = $1 order by seq', [taskId]);
  const count = (type: string, agentId?: string) => events.filter((event) => event.type === type && (agentId === undefined || event.agent_id === agentId)).length;
  for (const id of ['d1', 'd2', 'd3', 'd4']) assert.equal(count('AGENT_COMPLETED', id), 1, id);
  assert.equal(count('WORKFLOW_COMPLETED'), 1);
  assert.equal(count('LLM_OUTPUT'), 1);
  assert.deepEqual(events.map((event) => event.seq), events.map((_, index) => index + 1), 'seq stays gap-free');
});
