import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const QUESTION = 'How do geothermal plants make electricity; how does tidal power work; and how do heat pumps heat a house?';
const THREE_AGENTS = { tasks: ['How geothermal plants make electricity', 'How tidal power works', 'How heat pumps heat a house'], search_turns: 3 };

async function submitSwarm(gateway: Gateway, context: Record<string, unknown>) {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: QUESTION, context: { force_swarm: true, mock_swarm: THREE_AGENTS, ...context } });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id as string;
}

async function count(gateway: Gateway, query: string, taskId: string): Promise<number> {
  const { rows } = await gateway.sql.query(query, [taskId]);
  return rows[0].n;
}

const modelCallsOf = (gateway: Gateway, taskId: string) => count(gateway, 'select count(*)::int as n from usage_records where task_id = $1', taskId);
const callsInFlight = (gateway: Gateway, taskId: string) => count(gateway, 'select count(*)::int as n from token_reservations where task_id = $1', taskId);
const agentTurns = (gateway: Gateway, taskId: string) => count(gateway, `select count(*)::int as n from swarm_turns where task_id = $1 and agent != 'lead'`, taskId);
const eventCount = (gateway: Gateway, taskId: string, type: string) =>
  count(gateway, `select count(*)::int as n from task_events where task_id = $1 and type = '${type}'`, taskId);

async function waitForTurns(gateway: Gateway, taskId: string, turns: number) {
  await waitFor(`${turns} agent turns`, async () => ((await agentTurns(gateway, taskId)) >= turns ? true : undefined), 60_000);
}

/** Model calls this process started, by phase (agentgate_model_calls_total). */
async function modelCallsByPhase(gateway: Gateway): Promise<Record<string, number>> {
  const text = (await gateway.request('GET', '/metrics')).body as string;
  return Object.fromEntries([...text.matchAll(/^agentgate_model_calls_total\{phase="([^"]+)"\} (\d+)/gm)].map((match) => [match[1], Number(match[2])]));
}

test('a swarm paused mid-run stops at the round\'s boundary: no model call after WORKFLOW_PAUSED, no worker held; resumed, it completes once', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', WORKER_CONCURRENCY: '1' } });
  const taskId = await submitSwarm(gateway, { mock_delay_ms: 300 });
  await waitForTurns(gateway, taskId, 2);
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/pause`, { reason: 'look' })).status, 202);
  await waitFor('WORKFLOW_PAUSED', async () => ((await eventCount(gateway, taskId, 'WORKFLOW_PAUSED')) === 1 ? true : undefined), 60_000);
  const { rows } = await gateway.sql.query(`select payload from task_events where task_id = $1 and type = 'WORKFLOW_PAUSED'`, [taskId]);
  assert.match(rows[0].payload.checkpoint, /^swarm_round_\d+$/);
  const calls = await modelCallsOf(gateway, taskId);
  assert.equal(await callsInFlight(gateway, taskId), 0, 'no model call in flight');
  await sleep(3000);
  assert.equal(await modelCallsOf(gateway, taskId), calls, 'no model call started while paused');
  assert.equal(await callsInFlight(gateway, taskId), 0);

  const other = await gateway.request('POST', '/api/v1/tasks', { query: 'what is 2+2?', mode: 'simple' });
  assert.equal((await waitForTask(gateway, other.body.task_id, 30_000)).status, 'TASK_STATUS_COMPLETED', 'the only worker is free');

  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/resume`, {})).status, 202);
  const task = await waitForTask(gateway, taskId, 120_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.metadata.total_agents, 3);
  assert.equal(await eventCount(gateway, taskId, 'WORKFLOW_COMPLETED'), 1);
  assert.equal(await eventCount(gateway, taskId, 'LLM_OUTPUT'), 1);
  const { rows: perAgent } = await gateway.sql.query(`select agent, count(*)::int as turns, count(distinct round)::int as rounds from swarm_turns where task_id = $1 group by agent`, [taskId]);
  for (const row of perAgent) assert.equal(row.turns, row.rounds, `${row.agent}: one turn per round`);
});

test('cancel stops every agent of a swarm: no model call after WORKFLOW_CANCELLED', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const taskId = await submitSwarm(gateway, { mock_delay_ms: 400 });
  await waitForTurns(gateway, taskId, 2);
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/cancel`, {})).status, 200);
  const task = await waitForTask(gateway, taskId, 30_000);
  assert.equal(task.status, 'TASK_STATUS_CANCELLED');
  const calls = await modelCallsOf(gateway, taskId);
  await sleep(2000);
  assert.equal(await modelCallsOf(gateway, taskId), calls);
  assert.equal(await callsInFlight(gateway, taskId), 0);
  assert.equal(await eventCount(gateway, taskId, 'WORKFLOW_CANCELLED'), 1);
});

test('kill -9 with three agents mid-loop: after the restart no agent repeats a recorded turn, and the swarm completes once', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const taskId = await submitSwarm(gateway, { mock_delay_ms: 400 });
  await waitForTurns(gateway, taskId, 4);
  await gateway.kill('SIGKILL');
  const recorded = await agentTurns(gateway, taskId);
  await gateway.restart();
  const task = await waitForTask(gateway, taskId, 120_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const after = await agentTurns(gateway, taskId);
  assert.ok(recorded >= 4 && after > recorded, `killed mid-loop: ${recorded} turns recorded before the kill, ${after} in all`);
  const calls = await modelCallsByPhase(gateway);
  assert.equal(calls['swarm-agent'], after - recorded, `agent model calls after the restart (${calls['swarm-agent']}) are the turns recorded after it (${after - recorded})`);
  const { rows } = await gateway.sql.query(`select count(*) filter (where type = 'WORKFLOW_COMPLETED')::int as completed, count(*) filter (where type = 'LLM_OUTPUT')::int as outputs,
    count(*) filter (where type = 'AGENT_STARTED' and agent_id in ('ada', 'ben', 'cleo'))::int as started from task_events where task_id = $1`, [taskId]);
  assert.deepEqual(rows[0], { completed: 1, outputs: 1, started: 3 });
  assert.equal(task.metadata.total_agents, 3);
});

test('kill -9 while the lead plans: after the restart the plan is made once, each agent spawned once, and the swarm completes once', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: QUESTION, context: { force_swarm: true, mock_delay_ms: 1500 } });
  const taskId = answer.body.task_id as string;
  await waitFor('the lead to start planning', async () => ((await eventCount(gateway, taskId, 'PROGRESS')) >= 1 ? true : undefined), 30_000);
  assert.equal(await eventCount(gateway, taskId, 'LEAD_DECISION'), 0, 'killed before the plan was recorded');
  await gateway.kill('SIGKILL');
  await gateway.restart();
  const task = await waitForTask(gateway, taskId, 120_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const { rows } = await gateway.sql.query(`select count(*) filter (where type = 'LEAD_DECISION' and (payload->>'round')::int = 0)::int as plans,
    count(*) filter (where type = 'AGENT_STARTED' and payload ? 'role')::int as spawned, count(*) filter (where type = 'WORKFLOW_COMPLETED')::int as completed
    from task_events where task_id = $1`, [taskId]);
  assert.deepEqual(rows[0], { plans: 1, spawned: 3, completed: 1 });
  const { rows: agents } = await gateway.sql.query('select count(*)::int as n from swarm_agents where task_id = $1', [taskId]);
  assert.equal(agents[0].n, 3);
});
