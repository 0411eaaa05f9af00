import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

describe('GET /api/v1/tasks', () => {
  const gateway = useGateway();
  const sessionId = 'list-session';
  const taskIds: string[] = [];

  before(async () => {
    for (let index = 0; index < 3; index += 1) {
      const answer = await gateway().request('POST', '/api/v1/tasks', { query: `task ${index}`, session_id: sessionId });
      taskIds.push(answer.body.task_id);
      await waitForTask(gateway(), answer.body.task_id);
    }
    const other = await gateway().request('POST', '/api/v1/tasks', { query: 'other session' });
    taskIds.push(other.body.task_id);
    await waitForTask(gateway(), other.body.task_id);
    // Two rows in other states, written directly: the list must filter on them.
    await gateway().sql.query(`update tasks set status = 'CANCELLED' where id = $1`, [taskIds[0]]);
    await gateway().sql.query(`update tasks set status = 'FAILED' where id = $1`, [taskIds[1]]);
  });

  it('lists newest first with total_count and summary fields', async () => {
    const answer = await gateway().request('GET', '/api/v1/tasks?limit=2');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.total_count, 4);
    assert.deepEqual(answer.body.tasks.map((task: any) => task.task_id), [taskIds[3], taskIds[2]]);
    const [newest] = answer.body.tasks;
    assert.equal(newest.status, 'TASK_STATUS_COMPLETED');
    assert.equal(newest.mode, 'EXECUTION_MODE_SIMPLE');
    assert.ok(newest.completed_at);
    assert.ok(newest.total_token_usage.total_tokens > 0);
    assert.equal(newest.total_token_usage.total_tokens, newest.total_token_usage.prompt_tokens + newest.total_token_usage.completion_tokens);
    const page = await gateway().request('GET', '/api/v1/tasks?limit=2&offset=2');
    assert.deepEqual(page.body.tasks.map((task: any) => task.task_id), [taskIds[1], taskIds[0]]);
    assert.equal(page.body.total_count, 4);
  });

  it('filters by short status forms, the CANCELED alias and the session id in both forms', async () => {
    const cancelled = await gateway().request('GET', '/api/v1/tasks?status=CANCELED');
    assert.deepEqual(cancelled.body.tasks.map((task: any) => task.task_id), [taskIds[0]]);
    assert.equal(cancelled.body.tasks[0].status, 'TASK_STATUS_CANCELLED');
    const failed = await gateway().request('GET', '/api/v1/tasks?status=FAILED');
    assert.equal(failed.body.total_count, 1);
    const bySession = await gateway().request('GET', `/api/v1/tasks?session_id=${sessionId}`);
    assert.equal(bySession.body.total_count, 3);
    const { rows } = await gateway().sql.query('select id from sessions where external_id = $1', [sessionId]);
    const byUuid = await gateway().request('GET', `/api/v1/tasks?session_id=${rows[0].id}&status=COMPLETED`);
    assert.deepEqual(byUuid.body.tasks.map((task: any) => task.task_id), [taskIds[2]]);
    const unknownSession = await gateway().request('GET', '/api/v1/tasks?session_id=nobody-here');
    assert.deepEqual(unknownSession.body, { tasks: [], total_count: 0 });
  });

  for (const [query, message] of [
    ['limit=0', /limit/], ['limit=101', /limit/], ['limit=abc', /limit/], ['offset=-1', /offset/],
    ['status=SLEEPING', /invalid status/], ['session_id=a%20b', /session_id/],
  ] as const) {
    it(`answers 400 for ${query}`, async () => {
      const answer = await gateway().request('GET', `/api/v1/tasks?${query}`);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.error, message);
    });
  }

  it('shows the mode of a task while it runs, not only once it completed', async () => {
    const running = await gateway().request('POST', '/api/v1/tasks', { query: 'still running', context: { mock_delay_ms: 20_000 } });
    const summary = await waitFor('the task to start', async () => {
      const list = await gateway().request('GET', '/api/v1/tasks?status=RUNNING');
      return list.body.tasks.find((task: any) => task.task_id === running.body.task_id);
    });
    assert.equal(summary.mode, 'EXECUTION_MODE_SIMPLE');
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${running.body.task_id}`)).body.mode, 'simple');
    await gateway().request('POST', `/api/v1/tasks/${running.body.task_id}/cancel`);
  });
});
