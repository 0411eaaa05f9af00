import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };
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
    const started = events.filter((event) => event.type === 'AGENT_STARTED' && event.payload?.role !== undefined);
    assert.ok(started.length >= 2, `${started.length} agents started`);
    assert.ok(events.some((event) => event.type === 'LEAD_DECISION' && event.agent_id === 'swarm-lead'));
    assert.ok(events.some((event) => event.type === 'TASKLIST_UPDATED' && event.agent_id === 'swarm-lead'));
    assert.ok(events.some((event) => event.type === 'TEAM_STATUS'));
    const stages = new Set(events.filter((event) => event.type === 'PROGRESS').map((event) => event.payload?.stage));
    for (const stage of ['planning', 'agent_iteration', 'synthesizing']) assert.ok(stages.has(stage), `PROGRESS ${stage}`);
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
    const { rows: files } = await gateway().sql.query(`select path, convert_from(content, 'UTF8') as text from session_files f join tasks t on t.session_id = f.session_id where t.id = $1 order by path`, [taskId]);
    assert.deepEqual(files.map((file) => file.path), [...names].sort().map((name, index) => `findings/${name}-T${index + 1}.md`), 'each agent\'s findings are in the session workspace');
    assert.match(files[0].text, /https:\/\/corpus\.agentgate\.example\//);
  });

  it('a lead that closes with its own reply answers with it, without a synthesis', async () => {
    const taskId = await submitSwarm(gateway(), { mock_swarm: { reply: 'Geothermal plants use the heat of the Earth; tidal plants the sea.' } });
    const task = await waitForTask(gateway(), taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.result, 'Geothermal plants use the heat of the Earth; tidal plants the sea.');
    const events = await eventsOf(gateway(), taskId);
    assert.ok(!events.some((event) => event.agent_id === 'synthesis'), 'no synthesis');
    assert.ok(events.some((event) => event.type === 'LEAD_DECISION' && event.payload.actions.some((action: any) => action.type === 'done' && action.reply)));
  });
});

describe('the lead\'s own tools: file_read and a model tier per agent', () => {
  const gateway = useGateway({ env: { WEB_SEARCH_PROVIDER: 'fixture' } });

  it('reads the agents\' findings files before answering from them, and agents run on the tier the lead spawned them with', async () => {
    const taskId = await submitSwarm(gateway(), { mock_swarm: { read_findings: true, agent_tier: 'small' } });
    const task = await waitForTask(gateway(), taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    const read = events.find((event) => event.type === 'LEAD_TOOL_CALL');
    assert.equal(read?.payload.tool, 'file_read');
    assert.ok(read.payload.paths.length >= 2 && read.payload.paths.every((path: string) => path.startsWith('findings/')), JSON.stringify(read?.payload));
    const decision = events.find((event) => event.type === 'LEAD_DECISION' && event.seq > read.seq);
    assert.match(decision.message, /I read findings\//);
    assert.match(task.result, /^What the team wrote down:/);
    assert.match(task.result, /https:\/\/corpus\.agentgate\.example\//, 'the answer quotes the files');
    assert.ok(events.filter((event) => event.type === 'AGENT_STARTED' && event.payload?.role).every((event) => event.payload.model_tier === 'small'));
    const { rows } = await gateway().sql.query(`select distinct agent_id, model from usage_records where task_id = $1 and call_key like '%swarm:%'`, [taskId]);
    const models = (agent: (id: string) => boolean) => new Set(rows.filter((row) => agent(row.agent_id)).map((row) => row.model));
    assert.deepEqual(models((id) => id !== 'swarm-lead'), new Set(['mock-small']), 'agents on the small tier');
    assert.deepEqual(models((id) => id === 'swarm-lead'), new Set(['mock-medium']), 'the lead on its own');
    const { rows: [calls] } = await gateway().sql.query(`select count(*)::int as n from usage_records where task_id = $1 and agent_id = 'swarm-lead'`, [taskId]);
    assert.equal(calls.n, events.filter((event) => event.type === 'LEAD_DECISION').length + 1, 'the read is a model call of its own, counted');
  });

  it('a tier that does not exist is refused by name, and the swarm falls back to normal routing', async () => {
    const taskId = await submitSwarm(gateway(), { mock_swarm: { agent_tier: 'huge' } });
    const task = await waitForTask(gateway(), taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    assert.ok(events.some((event) => event.type === 'WARNING' && /model_tier huge is not one of small, medium, large/.test(event.message)));
    assert.ok(events.some((event) => event.type === 'ERROR_RECOVERY' && event.payload?.recovery === 'swarm_fallback'), JSON.stringify(events.filter((event) => event.type === 'ERROR_RECOVERY')));
  });
});

async function waitForEvent(gateway: Gateway, taskId: string, matches: (event: any) => boolean, description: string, timeoutMs = 60_000) {
  return waitFor(description, async () => (await eventsOf(gateway, taskId)).find(matches), timeoutMs);
}

describe('human messages to a running swarm', () => {
  const gateway = useGateway({ env: { ...authEnv, WEB_SEARCH_PROVIDER: 'fixture' } });
  let owner: Account;
  let colleague: Account;
  let stranger: Account;
  before(async () => {
    owner = await registerAccount(gateway(), 'owner');
    colleague = await addMember(gateway(), owner, 'colleague');
    stranger = await registerAccount(gateway(), 'stranger');
  });
  const send = (taskId: string, body: unknown, account: Account) => gateway().request('POST', `/api/v1/swarm/${taskId}/message`, body, withKey(account));

  it('reaches the lead, whose next decision answers it, and is in the session history; others are refused; a finished swarm is 409', async () => {
    const answer = await gateway().request('POST', '/api/v1/tasks', { query: QUESTION, context: { force_swarm: true, mock_delay_ms: 150, mock_swarm: { search_turns: 3 } } }, withKey(owner));
    assert.equal(answer.status, 200, answer.text);
    const taskId = answer.body.task_id as string;
    await waitForEvent(gateway(), taskId, (event) => event.type === 'PROGRESS' && event.payload?.stage === 'agent_iteration', 'an agent turn');
    const message = 'Please also say which of the two is older.';
    assert.equal((await send(taskId, { message }, stranger)).status, 404);
    assert.equal((await send(taskId, { message }, colleague)).status, 403);
    assert.equal((await send(taskId, { message: '' }, owner)).status, 400);
    assert.equal((await send(taskId, { message: 'x'.repeat(32 * 1024 + 1) }, owner)).status, 400);
    const sent = await send(taskId, { message }, owner);
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual(sent.body, { success: true, status: 'sent' });
    const task = await waitForTask(gateway(), taskId, 90_000, withKey(owner));
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    const received = events.find((event) => event.type === 'MESSAGE_RECEIVED');
    assert.equal(received?.message, message);
    const next = events.find((event) => event.type === 'LEAD_DECISION' && event.seq > received.seq);
    assert.ok(next, 'a lead decision after the message');
    assert.deepEqual(next.payload.human_messages, [message]);
    assert.match(next.message, /which of the two is older/);
    const interim = events.find((event) => event.type === 'LLM_OUTPUT' && event.agent_id === 'swarm-lead' && event.seq > received.seq);
    assert.ok(interim?.payload.interim, 'the lead answers the user at once with an interim reply');
    assert.match(interim.message, /which of the two is older/);
    assert.notEqual(task.result, interim.message, 'the interim reply is not the answer');
    const turns = await gateway().request('GET', `/api/v1/sessions/${task.session_id}/events`, undefined, withKey(owner));
    assert.equal(turns.status, 200, turns.text);
    assert.ok(turns.body.turns[0].events.some((event: any) => event.type === 'MESSAGE_RECEIVED' && event.message === message), 'in the session history');
    assert.equal((await send(taskId, { message: 'too late' }, owner)).status, 409);
  });

  it('a task that is not a swarm is 409, an unknown one 404', async () => {
    const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'plain', mode: 'simple' }, withKey(owner));
    assert.equal((await send(answer.body.task_id, { message: 'hello' }, owner)).status, 409);
    assert.equal((await send('00000000-0000-4000-8000-000000000000', { message: 'hello' }, owner)).status, 404);
  });
});
