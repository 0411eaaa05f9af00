import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const QUESTION = 'How do geothermal power plants make electricity, and how does tidal power work?';

async function runSwarm(gateway: Gateway, context: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: QUESTION, context: { force_swarm: true, ...context }, ...extra });
  assert.equal(answer.status, 200, answer.text);
  const task = await waitForTask(gateway, answer.body.task_id, 90_000);
  const { rows: events } = await gateway.sql.query(`select seq, type, agent_id, message, payload from task_events where task_id = $1 and type != 'LLM_PARTIAL' order by seq`, [task.task_id]);
  const { rows: calls } = await gateway.sql.query('select count(*)::int as n from usage_records where task_id = $1', [task.task_id]);
  return { task, events, calls: calls[0].n as number };
}

test('a swarm that would pass max_total_llm_calls stops at the limit, says so, and answers from what the agents found', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', SWARM_MAX_TOTAL_LLM_CALLS: '8' } });
  const { task, events, calls } = await runSwarm(gateway, { mock_swarm: { search_turns: 5 } });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.mode, 'swarm');
  assert.ok(calls <= 8, `${calls} model calls`);
  assert.match(task.metadata.stopped_by, /^max_total_llm_calls \(8\)/);
  assert.ok(events.some((event) => event.type === 'WARNING' && /stopped at its limit max_total_llm_calls \(8\)/.test(event.message)));
  assert.match(task.result, /https:\/\/corpus\.agentgate\.example\//, 'the answer cites what the searches found');
});

test('a swarm past max_total_tokens starts no further round and answers from what was found', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', SWARM_MAX_TOTAL_TOKENS: '1000' } });
  const { task, events } = await runSwarm(gateway, { mock_swarm: { search_turns: 5 } });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.match(task.metadata.stopped_by, /^max_total_tokens \(1000\): \d+ tokens used$/);
  assert.ok(events.some((event) => event.type === 'WARNING' && /max_total_tokens/.test(event.message)));
  assert.ok(task.metadata.rounds <= 2, `${task.metadata.rounds} rounds`);
  assert.match(task.result, /https:\/\/corpus\.agentgate\.example\//);
});

test('a lead that spawns past max_agents is refused with a clear message; the team it has completes the work', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', SWARM_MAX_AGENTS: '2' } });
  const { task, events } = await runSwarm(gateway, { mock_swarm: { agents: 4 } });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.metadata.total_agents, 2);
  const plan = events.find((event) => event.type === 'LEAD_DECISION');
  assert.deepEqual(plan.payload.refused, ['spawn_agent cleo: the swarm has reached max_agents (2)', 'spawn_agent dev: the swarm has reached max_agents (2)']);
  assert.ok(events.some((event) => event.type === 'WARNING' && /^The swarm refused: spawn_agent cleo: the swarm has reached max_agents \(2\)/.test(event.message)));
  assert.equal(events.filter((event) => event.type === 'AGENT_STARTED' && ['ada', 'ben', 'cleo', 'dev'].includes(event.agent_id)).length, 2);
});

test('max_iterations lowers the turns of every agent: each goes idle at its last turn with what it has', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const { task } = await runSwarm(gateway, { mock_swarm: { search_turns: 5 } }, { max_iterations: 2 });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const { rows } = await gateway.sql.query(`select name, turns, status, findings from swarm_agents where task_id = $1`, [task.task_id]);
  for (const agent of rows) {
    assert.equal(agent.turns, 2, agent.name);
    assert.equal(agent.status, 'idle');
    assert.match(agent.findings, /^Stopped at the limit of 2 turns/);
  }
});

test('rule 9: some agents failing, the answer comes from the rest and names the failure', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const { task, events } = await runSwarm(gateway, { mock_swarm: { fail_agents: ['ben'] } });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.mode, 'swarm');
  assert.ok(events.some((event) => event.type === 'ERROR_OCCURRED' && event.agent_id === 'ben'));
  assert.ok(events.some((event) => event.type === 'DELEGATION' && event.payload.agent === 'ada' && event.payload.task_id === 'T2'), 'ben\'s task goes to ada');
  assert.match(task.result, /ada:/);
  assert.match(task.result, /Failed: ben/);
  const { rows } = await gateway.sql.query('select status from swarm_tasks where task_id = $1', [task.task_id]);
  assert.ok(rows.every((row) => row.status === 'completed'));
});

test('rule 8: every agent failing falls back to standard routing without force_swarm', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const { task, events } = await runSwarm(gateway, { mock_swarm: { fail_agents: ['ada', 'ben'] } });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.notEqual(task.mode, 'swarm');
  assert.ok(task.result.length > 0);
  const fallback = events.find((event) => event.type === 'ERROR_RECOVERY' && event.payload.recovery === 'swarm_fallback');
  assert.ok(fallback, 'the fallback is announced');
  assert.match(fallback.payload.error, /every swarm agent failed/);
});

test('rule 8: with SWARM_ENABLED=0 a force_swarm task runs through normal routing, and the message route says the swarm is off', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', SWARM_ENABLED: '0' } });
  const { task, events } = await runSwarm(gateway, {});
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.notEqual(task.mode, 'swarm');
  assert.ok(!events.some((event) => event.type === 'LEAD_DECISION'));
  const sent = await gateway.request('POST', `/api/v1/swarm/${task.task_id}/message`, { message: 'hello' });
  assert.equal(sent.status, 409);
});

test('an agent past agent_timeout_seconds fails and the lead hears of it; with every agent timed out, routing falls back (rule 8)', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', SWARM_AGENT_TIMEOUT_SECONDS: '1' } });
  const { task, events } = await runSwarm(gateway, { mock_delay_ms: 300, mock_swarm: { search_turns: 6 } });
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const timedOut = events.filter((event) => event.type === 'ERROR_OCCURRED' && /timed out after agent_timeout_seconds \(1\)/.test(event.message));
  assert.deepEqual(timedOut.map((event) => event.agent_id).sort(), ['ada', 'ben']);
  const heard = events.find((event) => event.type === 'LEAD_DECISION' && event.payload.woken_by?.some((reason: string) => /timed out/.test(reason)));
  assert.ok(heard, 'the lead was woken by the time-outs');
  assert.ok(events.some((event) => event.type === 'ERROR_RECOVERY' && event.payload.recovery === 'swarm_fallback'));
});

test('time the swarm spends paused does not count toward agent_timeout_seconds', async (t) => {
  // Long enough for the agents' own work on a loaded two-core machine (their turns before the pause, the replay after
  // the resume and their last turns took over 3 s in one CI run), while the pause alone outlasts it.
  const timeoutSeconds = 8;
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', SWARM_AGENT_TIMEOUT_SECONDS: String(timeoutSeconds) } });
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: QUESTION, context: { force_swarm: true, mock_delay_ms: 100, mock_swarm: { search_turns: 2 } } });
  assert.equal(answer.status, 200, answer.text);
  const taskId = answer.body.task_id as string;
  const count = async (type: string) => (await gateway.sql.query('select count(*)::int as n from task_events where task_id = $1 and type = $2', [taskId, type])).rows[0].n as number;
  await waitFor('the agents to start', async () => ((await count('AGENT_STARTED')) >= 2 ? true : undefined), 30_000);
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/pause`, {})).status, 202);
  await waitFor('WORKFLOW_PAUSED', async () => ((await count('WORKFLOW_PAUSED')) === 1 ? true : undefined), 30_000);
  await sleep((timeoutSeconds + 1) * 1000);
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/resume`, {})).status, 202);
  const task = await waitForTask(gateway, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const { rows } = await gateway.sql.query(`select message from task_events where task_id = $1 and type = 'ERROR_OCCURRED'`, [taskId]);
  assert.deepEqual(rows.map((row) => row.message), [], 'no agent timed out for the time paused');
  assert.equal(task.mode, 'swarm');
  assert.equal(task.metadata.workflow_type, 'swarm', 'answered by the swarm, not the fallback');
});
