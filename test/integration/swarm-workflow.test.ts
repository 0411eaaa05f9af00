import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';

const QUESTION = 'How do geothermal power plants make electricity, and how does tidal power work?';

async function submitSwarm(gateway: Gateway, context: Record<string, unknown> = {}, query = QUESTION) {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query, context: { force_swarm: true, ...context } });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id as string;
}

async function eventsOf(gateway: Gateway, taskId: string) {
  const { rows } = await gateway.sql.query('select seq, type, agent_id, message, payload from task_events where task_id = $1 and type != $2 order by seq', [taskId, 'LLM_PARTIAL']);
  return rows;
}

describe('the swarm over the fixture corpus (mock model, no keys)', () => {
  const gateway = useGateway({ env: { WEB_SEARCH_PROVIDER: 'fixture' } });

  it('the lead spawns agents that search, message each other and go idle; every task completes; the answer cites what they found', async () => {
    const taskId = await submitSwarm(gateway());
    const task = await waitForTask(gateway(), taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.mode, 'swarm');
    assert.equal(task.metadata.workflow_type, 'swarm');
    assert.ok(task.metadata.total_agents >= 2, `total_agents ${task.metadata.total_agents}`);
    assert.ok(task.metadata.total_tokens > 0);
    assert.ok(task.metadata.model_breakdown.length >= 1);
    const events = await eventsOf(gateway(), taskId);
    const started = events.filter((event) => event.type === 'AGENT_STARTED');
    assert.ok(started.length >= 2, `${started.length} agents started`);
    assert.ok(events.some((event) => event.type === 'LEAD_DECISION' && event.agent_id === 'swarm-lead'));
    assert.ok(events.some((event) => event.type === 'TASKLIST_UPDATED' && event.agent_id === 'swarm-lead'));
    assert.ok(events.some((event) => event.type === 'TEAM_STATUS'));
    const names = new Set(started.map((event) => event.agent_id));
    assert.ok(events.some((event) => event.type === 'MESSAGE_SENT' && names.has(event.agent_id) && names.has(event.payload.to)), 'a message between agents');
    const { rows: read } = await gateway().sql.query('select count(*)::int as read from swarm_messages where task_id = $1 and sender != $2 and read_round is not null', [taskId, 'lead']);
    assert.ok(read[0].read >= 1, 'the message was read');
    for (const name of names) assert.ok(events.some((event) => event.type === 'AGENT_COMPLETED' && event.agent_id === name), `${name} completed`);
    const { rows: tasks } = await gateway().sql.query('select id, status from swarm_tasks where task_id = $1', [taskId]);
    assert.ok(tasks.length >= 2);
    assert.deepEqual(tasks.filter((row) => row.status !== 'completed'), [], 'every task completed');
    const { rows: searched } = await gateway().sql.query(`select output from tool_calls where task_id = $1 and tool = 'web_search' and error is null`, [taskId]);
    const urls = searched.flatMap((row) => [...JSON.stringify(row.output).matchAll(/"url":"(https?:[^"]+)"/g)].map((match) => match[1]));
    assert.ok(urls.some((url) => task.result.includes(url)), `the answer cites a page an agent found: ${task.result}`);
    assert.ok(events.at(-1)?.type === 'STREAM_END');
  });
});
