import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const TENANT = '00000000-0000-0000-0000-000000000001';
const USER = '00000000-0000-0000-0000-000000000002';

/** Submits the queries one after another in the session and returns the task ids. */
async function converse(gateway: Gateway, sessionId: string, queries: string[]): Promise<string[]> {
  const taskIds: string[] = [];
  for (const query of queries) {
    const submitted = await gateway.request('POST', '/api/v1/tasks', { query, session_id: sessionId });
    assert.equal(submitted.status, 200, submitted.text);
    await waitForTask(gateway, submitted.body.task_id);
    taskIds.push(submitted.body.task_id);
  }
  return taskIds;
}

async function sessionUuid(gateway: Gateway, externalId: string): Promise<string> {
  const { rows } = await gateway.sql.query('select id from sessions where external_id = $1 and deleted_at is null', [externalId]);
  return rows[0].id;
}

/** The session's workflows have all ended, title steps included. */
async function waitForWorkflows(gateway: Gateway, taskIds: string[]): Promise<void> {
  for (const taskId of taskIds) {
    await waitFor(`workflow ${taskId} to end`, async () => {
      const answer = await gateway.request('GET', `/api/v1/tasks/${taskId}/timeline`);
      return answer.body.engine_status === 'SUCCESS' ? true : undefined;
    });
  }
}

describe('sessions', () => {
  const gateway = useGateway();

  before(async () => {
    const taskIds = await converse(gateway(), 'shape-session', ['first question about shapes', 'second question about shapes']);
    await waitForWorkflows(gateway(), taskIds);
  });

  it('detail, history, events and budget answer the same for the custom id and the UUID', async () => {
    const uuid = await sessionUuid(gateway(), 'shape-session');
    for (const path of ['', '/history', '/events']) {
      const byExternal = await gateway().request('GET', `/api/v1/sessions/shape-session${path}`);
      const byUuid = await gateway().request('GET', `/api/v1/sessions/${uuid}${path}`);
      assert.equal(byExternal.status, 200, byExternal.text);
      assert.deepEqual(byUuid.body, byExternal.body, path);
    }
    for (const [id, tokenBudget] of [['shape-session', 50_000], [uuid, 60_000]] as const) {
      const budget = await gateway().request('PUT', `/api/v1/sessions/${id}/budget`, { token_budget: tokenBudget });
      assert.equal(budget.status, 200, budget.text);
    }
    const detail = (await gateway().request('GET', `/api/v1/sessions/${uuid}`)).body;
    assert.equal(detail.token_budget, 60_000);
    assert.equal(detail.session_id, uuid);
    assert.equal(detail.external_id, 'shape-session');
    assert.equal(detail.user_id, USER);
    assert.equal(detail.task_count, 2);
    assert.equal(detail.context.external_id, 'shape-session');
    assert.equal(detail.latest_task_query, 'second question about shapes');
    assert.equal(detail.latest_task_status, 'COMPLETED');
    assert.equal(detail.first_task_mode, 'simple');
    const { rows } = await gateway().sql.query('select sum(total_tokens)::int as tokens from usage_records where session_id = $1', [uuid]);
    assert.equal(detail.tokens_used, rows[0].tokens, 'tokens are the sum of the usage rows');
  });

  it('history lists every task oldest first with the fields of spec 2.8', async () => {
    const history = (await gateway().request('GET', '/api/v1/sessions/shape-session/history')).body;
    assert.equal(history.total, 2);
    assert.deepEqual(history.tasks.map((task: any) => task.query), ['first question about shapes', 'second question about shapes']);
    const [first] = history.tasks;
    assert.equal(first.workflow_id, first.task_id);
    assert.equal(first.status, 'COMPLETED');
    assert.equal(first.mode, 'simple');
    assert.match(first.result, /Mock answer to "first question about shapes"/);
    assert.equal(first.error_message, null);
    assert.equal(first.agents_used, 1);
    assert.equal(first.tools_invoked, 0);
    assert.ok(first.total_tokens > 0 && first.total_cost_usd > 0);
    assert.ok(first.duration_ms >= 0);
    assert.ok(Date.parse(first.started_at) <= Date.parse(first.completed_at));
  });

  it('events group the session into turns: paged, numbered from the offset, without LLM_PARTIAL', async () => {
    const all = (await gateway().request('GET', '/api/v1/sessions/shape-session/events')).body;
    assert.equal(all.count, 2);
    assert.deepEqual(all.turns.map((turn: any) => turn.turn), [1, 2]);
    const page = (await gateway().request('GET', '/api/v1/sessions/shape-session/events?limit=1&offset=1')).body;
    assert.equal(page.count, 2, 'count is every turn of the session');
    assert.equal(page.turns.length, 1);
    const [turn] = page.turns;
    assert.equal(turn.turn, 2);
    assert.equal(turn.user_query, 'second question about shapes');
    assert.equal(turn.task_id, all.turns[1].task_id);
    assert.match(turn.final_output, /Mock answer to "second question about shapes" after 2 earlier messages/);
    const types = turn.events.map((event: any) => event.type);
    assert.ok(!types.includes('LLM_PARTIAL'));
    assert.equal(types[0], 'WORKFLOW_STARTED');
    assert.equal(types.at(-1), 'STREAM_END');
    for (const field of ['workflow_id', 'type', 'agent_id', 'message', 'timestamp', 'seq', 'stream_id']) assert.ok(field in turn.events[0], field);
    assert.deepEqual(turn.metadata.agents_involved, ['final_output', 'orchestrator', 'simple-agent']);
    const history = (await gateway().request('GET', '/api/v1/sessions/shape-session/history')).body;
    assert.equal(turn.metadata.tokens_used, history.tasks[1].total_tokens);
    assert.ok(turn.metadata.execution_time_ms >= 0);
  });

  it('final_output falls back to the first LLM_OUTPUT event when the result is empty', async () => {
    const [taskId] = await converse(gateway(), 'fallback-session', ['answer me']);
    const { rows } = await gateway().sql.query(`select message from task_events where task_id = $1 and type = 'LLM_OUTPUT'`, [taskId]);
    await gateway().sql.query(`update tasks set result = '' where id = $1`, [taskId]);
    const turns = (await gateway().request('GET', '/api/v1/sessions/fallback-session/events')).body.turns;
    assert.equal(turns[0].final_output, rows[0].message);
  });

  for (const query of ['limit=0', 'limit=101', 'limit=many', 'offset=-1']) {
    it(`answers 400 for ${query} on the list and on events`, async () => {
      for (const path of ['/api/v1/sessions', '/api/v1/sessions/shape-session/events']) {
        const answer = await gateway().request('GET', `${path}?${query}`);
        assert.equal(answer.status, 400, `${path}: ${answer.text}`);
        assert.equal(typeof answer.body.error, 'string');
      }
    });
  }

  it('computes the summary from tasks and usage rows; budget_remaining never goes below 0', async () => {
    const sessionId = await insertSession(gateway(), { externalId: 'stats-session', tokenBudget: 1000, ageMinutes: 10 });
    await insertTask(gateway(), sessionId, { query: 'first question', status: 'COMPLETED', mode: 'simple', context: { force_research: true }, ageMinutes: 9, tokens: 400, cost: 0.01 });
    await insertTask(gateway(), sessionId, { query: 'failed one', status: 'FAILED', ageMinutes: 8, tokens: 300, cost: 0.02 });
    await insertTask(gateway(), sessionId, { query: 'timed out one', status: 'TIMEOUT', ageMinutes: 7, tokens: 200, cost: 0.03 });
    await insertTask(gateway(), sessionId, { query: 'cancelled one', status: 'CANCELLED', ageMinutes: 6, tokens: 150, cost: 0.04 });
    await insertTask(gateway(), sessionId, { query: 'latest question', status: 'COMPLETED', ageMinutes: 5 });
    const idleId = await insertSession(gateway(), { externalId: 'idle-session', tokenBudget: 5000, ageMinutes: 3 * 24 * 60 });
    await insertTask(gateway(), idleId, { query: 'long ago', status: 'COMPLETED', ageMinutes: 3 * 24 * 60 - 1 });

    const stats = (await gateway().request('GET', '/api/v1/sessions/stats-session')).body;
    assert.equal(stats.task_count, 5);
    assert.equal(stats.successful_tasks, 2, 'COMPLETED');
    assert.equal(stats.failed_tasks, 2, 'FAILED and TIMEOUT; CANCELLED is neither');
    assert.equal(stats.tokens_used, 1050);
    assert.equal(stats.total_cost_usd, 0.1);
    assert.equal(stats.average_cost_per_task, 0.02);
    assert.equal(stats.success_rate, 0.4);
    assert.equal(stats.budget_utilization, 1.05);
    assert.equal(stats.budget_remaining, 0);
    assert.equal(stats.is_near_budget_limit, true);
    assert.equal(stats.is_active, true);
    assert.equal(stats.is_research_session, true, 'the first task asked for research');
    assert.equal(stats.first_task_mode, 'simple');
    assert.equal(stats.latest_task_query, 'latest question');
    assert.equal(stats.latest_task_status, 'COMPLETED');
    assert.equal(stats.title, 'first question', 'without a stored title the first query stands in');

    const idle = (await gateway().request('GET', '/api/v1/sessions/idle-session')).body;
    assert.deepEqual([idle.is_active, idle.success_rate, idle.budget_remaining, idle.budget_utilization, idle.is_near_budget_limit, idle.is_research_session],
      [false, 1, 5000, 0, false, false]);

    const list = (await gateway().request('GET', '/api/v1/sessions?limit=100')).body;
    const ids = list.sessions.map((session: any) => session.session_id);
    assert.equal(list.total_count, ids.length);
    assert.ok(ids.indexOf(sessionId) < ids.indexOf(idleId), 'newest first');
    assert.deepEqual(list.sessions.find((session: any) => session.session_id === sessionId), stats);
    const paged = (await gateway().request('GET', '/api/v1/sessions?limit=1&offset=1')).body;
    assert.equal(paged.sessions.length, 1);
    assert.equal(paged.sessions[0].session_id, ids[1]);
    assert.equal(paged.total_count, list.total_count);
  });

  it('a task run step by step asks for its session\'s title in its completion, without a step of its own', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'Compare two rivers, then summarise', mode: 'standard', session_id: 'planned-title' });
    assert.equal(submitted.status, 200, submitted.text);
    const taskId = submitted.body.task_id;
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    await waitForWorkflows(gateway(), [taskId]);
    const titled = await waitFor('the generated title', async () => {
      const detail = (await gateway().request('GET', '/api/v1/sessions/planned-title')).body;
      return detail.context.title ? detail : undefined;
    });
    assert.ok(titled.title.length > 0);
    const { rows } = await gateway().sql.query('select function_name from dbos.operation_outputs where workflow_uuid = $1 order by function_id', [taskId]);
    const steps = rows.map((row) => row.function_name);
    assert.ok(steps.includes('start-task') && steps.includes('complete-task'), `run step by step: ${steps.join(', ')}`);
    assert.ok(!steps.includes('session-title'), `no title step: ${steps.join(', ')}`);
  });

  it('a title is generated after the first task, and a title set by the owner is never overwritten', async () => {
    const [firstTask] = await converse(gateway(), 'titled-session', ['Plan a trip to Kyoto in spring']);
    const titled = await waitFor('the generated title', async () => {
      const detail = (await gateway().request('GET', '/api/v1/sessions/titled-session')).body;
      return detail.context.title ? detail : undefined;
    });
    assert.ok(titled.title.length > 0 && [...titled.title].length <= 60, titled.title);
    assert.doesNotMatch(titled.title, /["\n]/);
    const { rows } = await gateway().sql.query(`
      select count(*) filter (where task_id is null)::int as session_rows, count(*) filter (where task_id = $1)::int as task_rows
      from usage_records u join sessions s on s.id = u.session_id where s.external_id = 'titled-session' and agent_id = 'title_generator'`, [firstTask]);
    assert.deepEqual(rows[0], { session_rows: 1, task_rows: 0 }, 'the title call is billed to the session, not to the first task');
    const task = (await gateway().request('GET', `/api/v1/tasks/${firstTask}`)).body;
    assert.ok(!JSON.stringify(task).includes('title_generator'), 'the task reports its own calls only');

    const renamed = await gateway().request('PATCH', '/api/v1/sessions/titled-session', { title: 'My trip' });
    assert.equal(renamed.status, 200, renamed.text);
    const [secondTask] = await converse(gateway(), 'titled-session', ['And in autumn?']);
    await waitForWorkflows(gateway(), [secondTask]);
    const detail = (await gateway().request('GET', '/api/v1/sessions/titled-session')).body;
    assert.equal(detail.title, 'My trip');
    assert.equal(detail.context.title, 'My trip');
  });

  it('falls back to the query cut at a word boundary when the model answer is no title', async () => {
    // The mock quotes the query: with long words its answer exceeds the 200 characters a title may have.
    const query = 'Internationalization considerations for multilingual documentation platforms serving enterprise customers worldwide requiring extensive accessibility compliance reviews';
    const [taskId] = await converse(gateway(), 'fallback-title', [query]);
    await waitForWorkflows(gateway(), [taskId]);
    const detail = (await gateway().request('GET', '/api/v1/sessions/fallback-title')).body;
    assert.equal(detail.title, 'Internationalization considerations for…');
  });

  it('PATCH cleans the title and counts characters, not bytes', async () => {
    await converse(gateway(), 'rename-session', ['name me']);
    const uuid = await sessionUuid(gateway(), 'rename-session');
    const accepted: Array<[string, string]> = [
      ['  日本語の会議メモ 🚀 Résumé  ', '日本語の会議メモ 🚀 Résumé'],
      ['Plan for\tQ3\nreview\u200B\uFEFF', 'Plan for Q3 review'],
      ['🚀'.repeat(60), '🚀'.repeat(60)],
      ['会'.repeat(60), '会'.repeat(60)],
      ['\u0007bell\u001b', 'bell'],
    ];
    for (const [index, [title, stored]] of accepted.entries()) {
      const id = index % 2 === 0 ? 'rename-session' : uuid;
      const answer = await gateway().request('PATCH', `/api/v1/sessions/${id}`, { title });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, { session_id: uuid, title: stored });
      assert.equal((await gateway().request('GET', `/api/v1/sessions/${uuid}`)).body.title, stored);
    }
    const rejected: Array<[unknown, RegExp]> = [
      ['a'.repeat(61), /at most 60 characters \(got 61\)/],
      ['🚀'.repeat(61), /at most 60 characters/],
      ['   ', /must not be empty/],
      ['\u200B\t\n', /must not be empty/],
      ['Plan\u0000', /invalid title: must not contain NUL/],
      ['', /must not be empty/],
      [42, /title/],
    ];
    for (const [title, message] of rejected) {
      const answer = await gateway().request('PATCH', '/api/v1/sessions/rename-session', { title });
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.error, message);
    }
    assert.equal((await gateway().request('PATCH', '/api/v1/sessions/rename-session', {})).status, 400);
    assert.equal((await gateway().request('GET', `/api/v1/sessions/${uuid}`)).body.title, 'bell', 'rejected titles change nothing');
  });

  it('a deleted session answers 404 on every read, under both ids, and DELETE stays 204', async () => {
    await converse(gateway(), 'doomed-session', ['soon gone']);
    const uuid = await sessionUuid(gateway(), 'doomed-session');
    const deleted = await gateway().request('DELETE', '/api/v1/sessions/doomed-session');
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    await assertGone(gateway(), ['doomed-session', uuid]);
    for (const id of ['doomed-session', uuid]) {
      assert.equal((await gateway().request('DELETE', `/api/v1/sessions/${id}`)).status, 204, 'idempotent for the owner');
    }
    const { rows } = await gateway().sql.query('select deleted_at, deleted_by from sessions where id = $1', [uuid]);
    assert.ok(rows[0].deleted_at instanceof Date);
    assert.equal(rows[0].deleted_by, USER);
    assert.deepEqual((await gateway().request('GET', '/api/v1/tasks?session_id=doomed-session')).body.tasks, []);
    assert.equal((await gateway().request('DELETE', '/api/v1/sessions/never-existed')).status, 404);

    const reborn = await gateway().request('POST', '/api/v1/tasks', { query: 'start again', session_id: 'doomed-session' });
    assert.equal(reborn.headers.get('x-session-id'), 'doomed-session');
    const task = await waitForTask(gateway(), reborn.body.task_id);
    assert.match(task.result, /after 0 earlier messages/, 'the new session does not see the deleted one');
    assert.notEqual(await sessionUuid(gateway(), 'doomed-session'), uuid);
  });

  it('an expired session reads as 404, and its custom id starts a fresh session', async () => {
    await converse(gateway(), 'expiring-session', ['remember this']);
    const uuid = await sessionUuid(gateway(), 'expiring-session');
    await gateway().sql.query(`update sessions set expires_at = now() - interval '1 minute' where id = $1`, [uuid]);
    await assertGone(gateway(), ['expiring-session', uuid]);

    const fresh = await gateway().request('POST', '/api/v1/tasks', { query: 'do you remember?', session_id: 'expiring-session' });
    const task = await waitForTask(gateway(), fresh.body.task_id);
    assert.match(task.result, /after 0 earlier messages/);
    const freshUuid = await sessionUuid(gateway(), 'expiring-session');
    assert.notEqual(freshUuid, uuid);
    assert.equal((await gateway().request('GET', '/api/v1/sessions/expiring-session')).body.task_count, 1);

    await gateway().sql.query(`update sessions set expires_at = now() - interval '1 minute' where id = $1`, [freshUuid]);
    const byUuid = await gateway().request('POST', '/api/v1/tasks', { query: 'and by uuid?', session_id: freshUuid });
    assert.notEqual(byUuid.headers.get('x-session-id'), freshUuid, 'an expired UUID also gets a new session');
    await waitForTask(gateway(), byUuid.body.task_id);
  });

  it("another user's session is 403 by UUID (404 for its events, spec 4.6), unknown by custom id, and 404 once deleted", async () => {
    const otherUser = randomUUID();
    await gateway().sql.query('insert into users (id, tenant_id, email) values ($1, $2, $3)', [otherUser, TENANT, `${otherUser}@example.test`]);
    const foreign = await insertSession(gateway(), { externalId: 'their-session', tokenBudget: 1000, ageMinutes: 1, userId: otherUser });
    for (const [method, body] of [['GET', undefined], ['PATCH', { title: 'mine now' }], ['DELETE', undefined], ['PUT', { token_budget: 5 }]] as const) {
      const path = method === 'PUT' ? `/api/v1/sessions/${foreign}/budget` : `/api/v1/sessions/${foreign}`;
      const answer = await gateway().request(method, path, body);
      assert.equal(answer.status, 403, `${method}: ${answer.text}`);
      assert.equal(answer.body.error, 'Forbidden: not the session owner');
    }
    const events = await gateway().request('GET', `/api/v1/sessions/${foreign}/events`);
    assert.equal(events.status, 404, events.text);
    assert.equal(events.body.error, 'Session not found');
    assert.equal((await gateway().request('GET', '/api/v1/sessions/their-session')).status, 404, 'custom ids are per user');
    const list = (await gateway().request('GET', '/api/v1/sessions?limit=100')).body;
    assert.ok(!list.sessions.some((session: any) => session.session_id === foreign));
    await gateway().sql.query('update sessions set deleted_at = now() where id = $1', [foreign]);
    assert.equal((await gateway().request('GET', `/api/v1/sessions/${foreign}`)).status, 404);
    assert.equal((await gateway().request('DELETE', `/api/v1/sessions/${foreign}`)).status, 404);
  });

  it('publishes the session routes in /openapi.json', async () => {
    const paths = (await gateway().request('GET', '/openapi.json')).body.paths;
    assert.deepEqual(Object.keys(paths['/api/v1/sessions']), ['get']);
    assert.deepEqual(Object.keys(paths['/api/v1/sessions/{sessionId}']).sort(), ['delete', 'get', 'patch']);
    assert.ok(paths['/api/v1/sessions/{sessionId}/history'].get);
    assert.ok(paths['/api/v1/sessions/{sessionId}/events'].get);
  });
});

/** Every read and write of a deleted or expired session answers 404, and the list leaves it out. */
async function assertGone(gateway: Gateway, ids: string[]): Promise<void> {
  for (const id of ids) {
    for (const [method, path, body] of [
      ['GET', '', undefined], ['GET', '/history', undefined], ['GET', '/events', undefined],
      ['PATCH', '', { title: 'too late' }], ['PUT', '/budget', { token_budget: 10 }],
    ] as const) {
      const answer = await gateway.request(method, `/api/v1/sessions/${id}${path}`, body);
      assert.equal(answer.status, 404, `${method} ${id}${path}: ${answer.text}`);
      assert.deepEqual(answer.body, { error: 'Session not found' });
    }
  }
  const list = (await gateway.request('GET', '/api/v1/sessions?limit=100')).body;
  assert.ok(!list.sessions.some((session: any) => ids.includes(session.session_id) || session.external_id === ids[0]));
}

async function insertSession(gateway: Gateway, options: { externalId: string; tokenBudget: number; ageMinutes: number; userId?: string }): Promise<string> {
  const id = randomUUID();
  await gateway.sql.query(`
    insert into sessions (id, tenant_id, user_id, external_id, token_budget, context, created_at, updated_at, expires_at)
    values ($1, $2, $3, $4, $5, jsonb_build_object('external_id', $4::text), now() - make_interval(mins => $6), now() - make_interval(mins => $6),
            now() + interval '30 days')`,
  [id, TENANT, options.userId ?? USER, options.externalId, options.tokenBudget, options.ageMinutes]);
  return id;
}

interface TaskRow { query: string; status: string; ageMinutes: number; mode?: string; context?: object; tokens?: number; cost?: number }

async function insertTask(gateway: Gateway, sessionId: string, task: TaskRow): Promise<string> {
  const id = randomUUID();
  await gateway.sql.query(`
    insert into tasks (id, tenant_id, user_id, session_id, query, status, mode, context, created_at, started_at, completed_at)
    values ($1, $2, $3, $4, $5, $6, $7, $8, now() - make_interval(mins => $9), now() - make_interval(mins => $9), now() - make_interval(mins => $9))`,
  [id, TENANT, USER, sessionId, task.query, task.status, task.mode ?? null, JSON.stringify(task.context ?? {}), task.ageMinutes]);
  if (task.tokens !== undefined) {
    await gateway.sql.query(`
      insert into usage_records (call_key, task_id, tenant_id, user_id, session_id, agent_id, provider, model, input_tokens, output_tokens, total_tokens, cost_usd)
      values ($1, $2, $3, $4, $5, 'simple-agent', 'mock', 'mock-small', $6, 0, $6, $7)`,
    [`${id}:test`, id, TENANT, USER, sessionId, task.tokens, task.cost ?? 0]);
  }
  return id;
}
