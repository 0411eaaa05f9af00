import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

/**
 * The wire contract of Shannon's Python SDK (shannon-sdk 0.7, clients/python/src/shannon/client.py): the keys each
 * list/get method reads with `data["key"]` must be present (a missing one is a KeyError), and each timestamp it parses
 * must be ISO 8601 as Python's `datetime.fromisoformat` reads it after replacing `Z`. The Python SDK cannot be
 * installed here (no PyPI), so its reads are asserted on our answers; keys it reads with `.get` are optional to it.
 */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** Asserts what the SDK indexes: every key present, and those named as timestamps parseable. */
function assertSdkReads(method: string, record: Record<string, unknown>, keys: string[], timestamps: string[] = [], optionalTimestamps: string[] = []) {
  for (const key of keys) assert.ok(key in record && record[key] !== undefined, `${method}: the SDK reads ["${key}"] (got keys ${Object.keys(record).join(', ')})`);
  for (const key of timestamps) assert.match(String(record[key]), ISO, `${method}: ${key} is parsed as a timestamp`);
  for (const key of optionalTimestamps) if (record[key]) assert.match(String(record[key]), ISO, `${method}: ${key}, when set, is parsed as a timestamp`);
}

describe('Shannon Python SDK: every list/get method of a built feature parses our answers', () => {
  const gateway = useGateway();

  it('tasks, sessions, history and events', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'Name a prime number', session_id: 'sdk-shapes-1', mode: 'simple' });
    assert.equal(submitted.status, 200, submitted.text);
    assertSdkReads('submit_task', submitted.body, ['task_id']);
    await waitForTask(gateway(), submitted.body.task_id);

    const status = await gateway().request('GET', `/api/v1/tasks/${submitted.body.task_id}`);
    assertSdkReads('get_status', status.body, ['task_id'], [], ['created_at', 'updated_at']);

    const tasks = await gateway().request('GET', '/api/v1/tasks');
    assert.ok(tasks.body.tasks.length > 0);
    // Spec 2.7 (the summary) covers what the SDK reads.
    for (const task of tasks.body.tasks) assertSdkReads('list_tasks', task, ['task_id', 'query', 'status', 'mode', 'created_at', 'completed_at', 'total_token_usage'], ['created_at'], ['completed_at']);
    assert.equal(typeof tasks.body.total_count, 'number');

    const events = await gateway().request('GET', `/api/v1/tasks/${submitted.body.task_id}/events`);
    const eventList = events.body.events ?? events.body;
    assert.ok(eventList.length > 0);
    for (const event of eventList) assertSdkReads('get_task_events', event, ['timestamp'], ['timestamp']);

    const sessions = await gateway().request('GET', '/api/v1/sessions');
    assert.ok(sessions.body.sessions.length > 0);
    for (const session of sessions.body.sessions) {
      // Spec 2.9 (session summary).
      assertSdkReads('list_sessions', session, ['session_id', 'user_id', 'task_count', 'tokens_used', 'created_at', 'title', 'latest_task_query', 'latest_task_status',
        'first_task_mode', 'last_activity_at', 'successful_tasks', 'failed_tasks', 'total_cost_usd', 'average_cost_per_task', 'success_rate', 'budget_utilization',
        'budget_remaining', 'is_near_budget_limit', 'is_active', 'is_research_session'], ['created_at'], ['updated_at', 'expires_at', 'last_activity_at']);
      assert.ok(session.session_id || session.context?.external_id, 'list_sessions: a session id');
    }

    const session = await gateway().request('GET', '/api/v1/sessions/sdk-shapes-1');
    assert.equal(session.status, 200, session.text);
    assertSdkReads('get_session', session.body, ['created_at', 'user_id'], ['created_at'], ['updated_at', 'expires_at']);
    // Read with .get() and a default, so a missing key was not an error but a wrong figure: the cost as 0.
    assert.ok(session.body.total_cost_usd > 0);
    assert.equal(session.body.cost_usd, session.body.total_cost_usd, 'get_session reads the session\'s cost as cost_usd');
    assert.equal(session.body.research_strategy, null, 'get_session reads research_strategy: none here');
    const research = await gateway().request('POST', '/api/v1/tasks', { query: 'Research the history of Oslo', session_id: 'sdk-shapes-research', research_strategy: 'quick', context: { force_research: true } });
    assert.equal(research.status, 200, research.text);
    const researchSession = await gateway().request('GET', '/api/v1/sessions/sdk-shapes-research');
    assert.deepEqual([researchSession.body.is_research_session, researchSession.body.research_strategy], [true, 'quick']);

    const history = await gateway().request('GET', '/api/v1/sessions/sdk-shapes-1/history');
    assert.ok(history.body.tasks.length > 0, 'the SDK reads history items under "tasks"');
    // Spec 2.8: the required fields of a history item.
    for (const item of history.body.tasks) assertSdkReads('get_session_history', item, ['task_id', 'workflow_id', 'query', 'status', 'started_at'], ['started_at'], ['completed_at']);

    const turns = await gateway().request('GET', '/api/v1/sessions/sdk-shapes-1/events');
    assert.ok(turns.body.turns.length > 0);
    for (const turn of turns.body.turns) {
      assertSdkReads('get_session_events', turn, ['turn', 'task_id', 'user_query', 'timestamp'], ['timestamp']);
      for (const event of turn.events ?? []) assertSdkReads('get_session_events (event)', event, ['timestamp'], ['timestamp']);
    }
  });

  it('schedules: list items and records carry every spec 2.10 field; runs', async () => {
    const created = await gateway().request('POST', '/api/v1/schedules', {
      name: 'Weekly digest', description: 'Mondays', cron_expression: '0 9 * * 1', timezone: 'Europe/Lisbon', task_query: 'Summarise the week',
      task_context: { tone: 'brief' }, max_budget_per_run_usd: 2.5, timeout_seconds: 900,
    });
    assert.equal(created.status, 201, created.text);
    const spec210 = ['id', 'name', 'description', 'cron_expression', 'timezone', 'task_query', 'task_context', 'max_budget_per_run_usd', 'timeout_seconds',
      'status', 'created_at', 'updated_at', 'next_run_at', 'last_run_at', 'total_runs', 'successful_runs', 'failed_runs'];

    const list = await gateway().request('GET', '/api/v1/schedules');
    assert.equal(list.status, 200, list.text);
    const [item] = list.body.schedules;
    assertSdkReads('list_schedules', item, [...spec210, 'schedule_id'], ['created_at', 'updated_at'], ['next_run_at', 'last_run_at']);
    assert.deepEqual([item.task_query, item.description, item.timezone, item.max_budget_per_run_usd, item.timeout_seconds, item.task_context],
      ['Summarise the week', 'Mondays', 'Europe/Lisbon', 2.5, 900, { tone: 'brief' }]);
    assert.equal(list.body.total_count, 1);

    const record = await gateway().request('GET', `/api/v1/schedules/${created.body.schedule_id}`);
    assertSdkReads('get_schedule', record.body, [...spec210, 'schedule_id', 'user_id', 'paused_at', 'pause_reason'], ['created_at', 'updated_at'], ['next_run_at', 'last_run_at', 'paused_at']);
    assert.deepEqual(item, Object.fromEntries(Object.keys(item).map((key) => [key, record.body[key]])), 'a list item says what the record says');

    const runs = await gateway().request('GET', `/api/v1/schedules/${created.body.schedule_id}/runs`);
    assert.equal(runs.status, 200, runs.text);
    assert.deepEqual([runs.body.runs, runs.body.total_count], [[], 0]);
  });

  it('tools, skills and agents', async () => {
    const tools = await gateway().request('GET', '/api/v1/tools');
    assert.ok((Array.isArray(tools.body) ? tools.body : tools.body.tools).every((tool: any) => typeof tool.name === 'string' && typeof tool.parameters === 'object'));
    const tool = await gateway().request('GET', '/api/v1/tools/calculator');
    assert.equal(tool.status, 200);
    assert.equal(tool.body.name, 'calculator');
    const executed = await gateway().request('POST', '/api/v1/tools/calculator/execute', { arguments: { expression: '6*7' } });
    assert.equal(executed.status, 200, executed.text);
    assert.equal(executed.body.success, true);
    if (executed.body.usage !== undefined) assert.equal(typeof executed.body.usage, 'object');

    const skills = await gateway().request('GET', '/api/v1/skills');
    assert.equal(skills.status, 200);
    assert.ok(Array.isArray(skills.body.skills));
    const agents = await gateway().request('GET', '/api/v1/agents');
    assert.equal(agents.status, 200);
    assert.ok(Array.isArray(agents.body.agents));
  });
});
