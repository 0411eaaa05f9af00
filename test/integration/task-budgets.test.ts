import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { holdInserts } from '../helpers/held-inserts.ts';

describe('token budgets', () => {
  const gateway = useGateway();
  const events = async (taskId: string) =>
    (await gateway().sql.query('select type, payload from task_events where task_id = $1 order by seq', [taskId])).rows;
  /** The task paused for its session's token budget, which its 100 % threshold names. */
  const pausedForSessionBudget = async (taskId: string) => {
    const state = await waitFor('the session budget pause', async () => {
      const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`);
      return answer.body.is_paused ? answer.body : undefined;
    });
    assert.equal(state.pause_reason, 'budget');
    const threshold = (await events(taskId)).find((event) => event.type === 'BUDGET_THRESHOLD');
    assert.equal(threshold.payload.scope, 'session');
  };

  it('a budget too small for the call pauses the task with reason budget; raising it and resuming completes', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'a question that needs more tokens than allowed', context: { token_budget: 20 } });
    const taskId = submitted.body.task_id;
    const state = await waitFor('the budget pause', async () => {
      const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`);
      return answer.body.is_paused ? answer.body : undefined;
    });
    assert.equal(state.pause_reason, 'budget');
    assert.equal(state.paused_by, 'system');
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED');
    const threshold = (await events(taskId)).find((event) => event.type === 'BUDGET_THRESHOLD');
    assert.deepEqual([threshold.payload.scope, threshold.payload.threshold, threshold.payload.budget], ['task', 100, 20]);
    const { rows } = await gateway().sql.query('select count(*)::int as count from usage_records where task_id = $1', [taskId]);
    assert.equal(rows[0].count, 0, 'no model call started over budget');

    const raised = await gateway().request('PUT', `/api/v1/tasks/${taskId}/budget`, { token_budget: 10_000 });
    assert.equal(raised.status, 200);
    assert.equal(raised.body.token_budget, 10_000);
    await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`);
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
  });

  it('a call is capped to the room left: the task never spends more than its budget, and crosses 80/90/100 %', async () => {
    // The prompt estimate is chars/4; leave room for 20 answer tokens of a longer mock answer.
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'cap me', context: { token_budget: 60, mock_answer_words: 200 } });
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.ok(task.usage.total_tokens <= 60, `spent ${task.usage.total_tokens} of 60`);
    const thresholds = (await events(submitted.body.task_id)).filter((event) => event.type === 'BUDGET_THRESHOLD').map((event) => event.payload.threshold);
    assert.deepEqual(thresholds, [80, 90, 100]);
  });

  it('a session budget applies across its tasks', async () => {
    const first = await gateway().request('POST', '/api/v1/tasks', { query: 'first turn', session_id: 'budget-session' });
    await waitForTask(gateway(), first.body.task_id);
    const lowered = await gateway().request('PUT', '/api/v1/sessions/budget-session/budget', { token_budget: 10 });
    assert.equal(lowered.status, 200);
    assert.ok(lowered.body.tokens_used > 10);
    const second = await gateway().request('POST', '/api/v1/tasks', { query: 'second turn', session_id: 'budget-session' });
    await pausedForSessionBudget(second.body.task_id);
    const missing = await gateway().request('PUT', '/api/v1/sessions/no-such-session/budget', { token_budget: 10 });
    assert.equal(missing.status, 404);
    const invalid = await gateway().request('PUT', `/api/v1/tasks/${second.body.task_id}/budget`, { token_budget: 0 });
    assert.equal(invalid.status, 400);
    await gateway().request('POST', `/api/v1/tasks/${second.body.task_id}/cancel`);
  });

  it('a reservation committed while a call waits for its session\'s lock counts in the budgets that call reads', async () => {
    const first = await gateway().request('POST', '/api/v1/tasks', { query: 'first turn', session_id: 'held-session' });
    await waitForTask(gateway(), first.body.task_id);
    const { rows: [{ session_id: sessionId }] } = await gateway().sql.query('select session_id from tasks where id = $1', [first.body.task_id]);
    const { tokens_used: used } = (await gateway().request('PUT', '/api/v1/sessions/held-session/budget', { token_budget: 100_000 })).body;
    assert.ok(used > 0);
    const budget = await gateway().request('PUT', '/api/v1/sessions/held-session/budget', { token_budget: used + 5_000 });
    assert.equal(budget.status, 200);
    // Another call's reservation, made under the session's lock (which a submission needs too, so it is taken while
    // the next task's workflow is held at its start) and committed while that task's opening waits for the lock.
    const start = await holdInserts(gateway().databaseUrl, 'dbos.workflow_status', { lockKey: 4245 });
    const holder = await gateway().sql.connect();
    try {
      const submission = gateway().request('POST', '/api/v1/tasks', { query: 'second turn', session_id: 'held-session' });
      await waitFor('the workflow start to be held', async () => (await start.waiting()) || undefined);
      await holder.query('begin');
      await holder.query('select 1 from sessions where id = $1 for no key update', [sessionId]);
      await holder.query(`insert into token_reservations (call_key, task_id, session_id, tokens, cost_usd) values ('held-call', $1, $2, 4990, 0)`, [first.body.task_id, sessionId]);
      await start.release();
      const second = await submission;
      assert.equal(second.status, 200);
      await waitFor('the opening waiting for the session lock', async () => {
        const { rows } = await gateway().sql.query(`select query from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`);
        return rows.some((row) => /for no key update of "?tasks"?, "?sessions"?/.test(row.query)) || undefined;
      });
      await holder.query('commit');
      await pausedForSessionBudget(second.body.task_id);
      const { rows } = await gateway().sql.query('select count(*)::int as count from usage_records where task_id = $1', [second.body.task_id]);
      assert.equal(rows[0].count, 0, 'no model call started past the reservation');
      await gateway().request('POST', `/api/v1/tasks/${second.body.task_id}/cancel`);
    } finally {
      await start.release();
      await holder.query('rollback').catch(() => {});
      holder.release();
    }
  });
});

describe('budget exhaustion configured to fail', () => {
  const gateway = useGateway({ env: { BUDGET_EXHAUSTED_ACTION: 'fail' } });

  it('fails the task with a clear error', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'too expensive', context: { token_budget: 5 } });
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /task token budget exhausted: \d+ of 5 tokens used/);
  });
});

describe('time limits', () => {
  const gateway = useGateway({ env: { TASK_TIMEOUT_SECONDS: '1' } });

  it('a task over its wall-clock limit ends TIMEOUT with an error text', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'too slow', context: { mock_delay_ms: 5000 } });
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_TIMEOUT');
    assert.match(task.error, /time limit of 1 s/);
  });
});

describe('agent execution limit', () => {
  const gateway = useGateway({ env: { AGENT_TIMEOUT_SECONDS: '1' } });

  it('an agent over AGENT_TIMEOUT_SECONDS fails the task, naming the limit', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow agent', context: { mock_delay_ms: 5000 } });
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /AGENT_TIMEOUT_SECONDS/);
  });
});
