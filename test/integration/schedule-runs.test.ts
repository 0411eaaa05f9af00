import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { startOwnPostgres } from '../helpers/own-postgres.ts';

/** Per-minute schedules are allowed here, and due runs are looked for ten times a second. */
const env = { SCHEDULE_MIN_INTERVAL_MINS: '1', SCHEDULE_POLL_INTERVAL_MS: '100', SCHEDULE_CATCHUP_SECONDS: '150', DEFAULT_TASK_MODE: 'auto' };

/**
 * A schedule that runs once a year unless a test says otherwise, so no occurrence of its own falls due while a test
 * runs (an hourly one did, once, when a test spanned the top of the hour, and counted two runs).
 */
async function createSchedule(gateway: Gateway, body: Record<string, unknown>): Promise<string> {
  const created = await gateway.request('POST', '/api/v1/schedules', { name: 'runs', cron_expression: '0 0 1 1 *', task_query: 'What changed today?', ...body });
  assert.equal(created.status, 201, created.text);
  return created.body.schedule_id;
}

/** Makes the schedule's next run due now, as if its time had come. */
async function makeDue(gateway: Gateway, id: string): Promise<void> {
  await gateway.sql.query('update schedules set next_run_at = now() where id = $1', [id]);
}

async function runs(gateway: Gateway, id: string): Promise<any[]> {
  const answer = await gateway.request('GET', `/api/v1/schedules/${id}/runs`);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.runs;
}

async function waitForRuns(gateway: Gateway, id: string, count: number, finished = true): Promise<any[]> {
  return waitFor(`${count} runs of ${id}`, async () => {
    const listed = await runs(gateway, id);
    const done = listed.filter((run) => run.status !== 'SKIPPED' && (!finished || ['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(run.status)));
    return done.length >= count ? listed : undefined;
  }, 30_000);
}

/**
 * A schedule due every minute, created in a minute's last seconds, also falls due on its own during its test, beside
 * the run the test makes due: such a test starts clear of the minute's edge.
 */
async function clearOfMinuteEdge(marginMs = 20_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await sleep(left + 500);
}

const schedule = async (gateway: Gateway, id: string) => (await gateway.request('GET', `/api/v1/schedules/${id}`)).body;

describe('schedule runs', () => {
  const gateway = useGateway({ env });

  it('a due run is an ordinary task of the owner in the schedule\'s own session, marked as a schedule\'s; counters, times and the run record follow', async () => {
    const id = await createSchedule(gateway(), { task_context: { use_case_preset: 'quick' } });
    const created = await schedule(gateway(), id);
    await makeDue(gateway(), id);
    const [run] = await waitForRuns(gateway(), id, 1);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
    assert.equal(run.query, 'What changed today?');
    assert.ok(run.total_tokens > 0 && run.total_cost_usd > 0);
    assert.deepEqual([run.model_used, run.provider], ['mock-small', 'mock']);
    assert.ok(run.duration_ms >= 0 && run.started_at && run.completed_at && run.triggered_at && run.result);
    assert.equal(run.error_message, undefined, 'empty optional fields are left out');

    const task = (await gateway().request('GET', `/api/v1/tasks/${run.workflow_id}`)).body;
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.deepEqual([task.context.trigger_type, task.context.schedule_id, task.context.max_budget_usd, task.context.use_case_preset], ['schedule', id, 10, 'quick']);
    assert.equal(task.session_id, `schedule-${id}`);
    const { rows: [stored] } = await gateway().sql.query('select user_id, tenant_id, schedule_id, cost_budget_usd::float8 as budget, options from tasks where id = $1', [run.workflow_id]);
    assert.deepEqual([stored.user_id, stored.schedule_id, stored.budget, stored.options.timeout_seconds], [created.user_id, id, 10, 600]);

    const after = await schedule(gateway(), id);
    assert.deepEqual([after.total_runs, after.successful_runs, after.failed_runs], [1, 1, 0]);
    assert.ok(after.last_run_at && Date.parse(after.last_run_at) <= Date.now());
    assert.equal(after.next_run_at, created.next_run_at, 'the next run is the next occurrence again');

    await makeDue(gateway(), id);
    const second = await waitForRuns(gateway(), id, 2);
    assert.match(second[0].result, /after 2 earlier messages/, 'the second run continues the schedule\'s session');
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${second[0].workflow_id}`)).body.session_id, `schedule-${id}`);
  });

  it('a run whose model would overspend its budget stops, the schedule pauses with the reason, and no further run starts; resume computes the next run', async () => {
    // The role's agent calls the calculator, then answers: the first turn fits the $0.00012, the answer does not.
    await clearOfMinuteEdge();
    const id = await createSchedule(gateway(), {
      cron_expression: '* * * * *', max_budget_per_run_usd: 0.00012,
      task_context: { role: 'generalist', mock_tool_calls: [{ tool: 'calculator', args: { expression: '2+2' } }], mock_answer_words: 60 },
    });
    await makeDue(gateway(), id);
    const [run] = await waitForRuns(gateway(), id, 1);
    assert.equal(run.status, 'FAILED', JSON.stringify(run));
    assert.match(run.error_message, /^run cost budget exhausted: \$0\.0000\d+ of \$0\.00012 used, too little left for the next model call$/);
    assert.ok(run.total_cost_usd > 0 && run.total_cost_usd <= 0.00012, `spent ${run.total_cost_usd}: something, and never more than the budget`);
    const paused = await schedule(gateway(), id);
    assert.deepEqual([paused.status, paused.next_run_at, paused.total_runs, paused.failed_runs], ['PAUSED', null, 1, 1]);
    assert.match(paused.pause_reason, new RegExp(`^Auto-paused: run ${run.workflow_id} exceeded its budget \\(run cost budget exhausted`));
    const events = (await gateway().request('GET', `/api/v1/tasks/${run.workflow_id}/events?limit=200`)).body.events;
    assert.deepEqual(events.slice(-3).map((event: { type: string }) => event.type), ['ERROR_OCCURRED', 'SCHEDULE_PAUSED', 'STREAM_END']);
    assert.equal(events.at(-2).payload.schedule_id, id);

    await sleep(1500);
    assert.equal((await runs(gateway(), id)).length, 1, 'a paused schedule starts nothing');
    const resumed = await gateway().request('POST', `/api/v1/schedules/${id}/resume`);
    const nextMinute = Math.ceil((Date.now() + 1) / 60_000) * 60_000;
    assert.ok([nextMinute, nextMinute + 60_000].includes(Date.parse(resumed.body.next_run_at)), resumed.text);
    await gateway().request('POST', `/api/v1/schedules/${id}/pause`);
  });

  it('a budget too small for any model call: the run fails without calling a model, and the schedule pauses', async () => {
    const id = await createSchedule(gateway(), { max_budget_per_run_usd: 0.0000001 });
    await makeDue(gateway(), id);
    const [run] = await waitForRuns(gateway(), id, 1);
    assert.equal(run.status, 'FAILED', JSON.stringify(run));
    assert.match(run.error_message, /^run cost budget exhausted: \$0\.000000 of \$1e-7 used/);
    assert.deepEqual([run.total_tokens, run.total_cost_usd], [0, 0]);
    assert.equal((await schedule(gateway(), id)).status, 'PAUSED');
  });

  it('a run out of a token budget fails rather than waiting for someone to raise it, and its schedule pauses, naming the budget', async () => {
    const id = await createSchedule(gateway(), { task_context: { token_budget: 20 } });
    await makeDue(gateway(), id);
    const [run] = await waitForRuns(gateway(), id, 1);
    assert.equal(run.status, 'FAILED', JSON.stringify(run));
    assert.match(run.error_message, /^task token budget exhausted: \d+ of 20 tokens used$/);
    const paused = await schedule(gateway(), id);
    assert.equal(paused.status, 'PAUSED');
    assert.match(paused.pause_reason, /exceeded its budget \(task token budget exhausted/);
  });

  it('a run past its own time limit ends TIMEOUT and counts as failed; the schedule stays active', async () => {
    const id = await createSchedule(gateway(), { timeout_seconds: 1, task_context: { mock_delay_ms: 5000 } });
    await makeDue(gateway(), id);
    const [run] = await waitForRuns(gateway(), id, 1);
    assert.equal(run.status, 'TIMEOUT');
    assert.match(run.error_message, /time limit of 1 s/);
    const after = await schedule(gateway(), id);
    assert.deepEqual([after.status, after.total_runs, after.successful_runs, after.failed_runs], ['ACTIVE', 1, 0, 1]);
  });

  it('a run cancelled by its owner counts as failed and the next one still starts', async () => {
    const id = await createSchedule(gateway(), { task_context: { mock_delay_ms: 5000 } });
    await makeDue(gateway(), id);
    const [started] = await waitForRuns(gateway(), id, 1, false);
    await gateway().request('POST', `/api/v1/tasks/${started.workflow_id}/cancel`);
    await waitForTask(gateway(), started.workflow_id);
    const after = await schedule(gateway(), id);
    assert.deepEqual([after.total_runs, after.successful_runs, after.failed_runs], [1, 0, 1]);
    await makeDue(gateway(), id);
    await waitForRuns(gateway(), id, 2, false);
  });
});

describe('schedule runs across a crash', () => {
  it('occurrences missed while no process ran: the latest within the catch-up window starts once, the older ones are recorded as skipped', async (t) => {
    const gateway = await startGateway(t, { env });
    const id = await createSchedule(gateway, { cron_expression: '* * * * *' });
    await gateway.kill('SIGKILL');
    // Down for five minutes and more: the schedule was due at the top of the minute five minutes ago.
    await gateway.sql.query(`update schedules set next_run_at = date_trunc('minute', now()) - interval '5 minutes' where id = $1`, [id]);
    await gateway.restart();
    const listed = await waitFor('the catch-up run', async () => {
      const all = await runs(gateway, id);
      return all.some((run) => run.status !== 'SKIPPED') ? all : undefined;
    });
    const started = listed.filter((run) => run.status !== 'SKIPPED');
    assert.equal(started.length, 1, JSON.stringify(listed));
    const skipped = listed.filter((run) => run.status === 'SKIPPED');
    assert.ok(skipped.length >= 5, `five or more skipped: ${JSON.stringify(listed)}`);
    const startedAt = Date.parse(started[0].scheduled_for);
    assert.ok(skipped.every((run) => Date.parse(run.scheduled_for) < startedAt), 'only occurrences before the one that ran are skipped');
    assert.ok(skipped.every((run) => run.workflow_id === '' && run.total_tokens === 0));
    for (const run of skipped) {
      const late = startedAt - Date.parse(run.scheduled_for);
      assert.match(run.error_message, late > 150_000 ? /^missed: no process could start it within 150 s/ : /^(superseded by the run of|missed)/);
    }
    assert.ok(skipped.some((run) => run.error_message.startsWith('missed')));
    const { rows } = await gateway.sql.query('select count(*)::int as count from tasks where schedule_id = $1', [id]);
    assert.equal(rows[0].count, 1, 'one task for all the missed occurrences');
    const after = await schedule(gateway, id);
    assert.equal(after.total_runs, 1);
    assert.ok(Date.parse(after.next_run_at) > startedAt);
  });

  it('the database down when a run falls due: the server stays up, and the run starts once when the database is back', { timeout: 120_000 }, async (t) => {
    const postgres = await startOwnPostgres(t);
    const gateway = await startGateway(t, { databaseUrl: postgres.url, env: { ...env, DB_CONNECT_TIMEOUT_MS: '1000' } });
    const id = await createSchedule(gateway, {});
    await gateway.sql.query(`update schedules set next_run_at = now() + interval '1 second' where id = $1`, [id]);
    await postgres.stop();
    await sleep(4_000);
    assert.ok(gateway.isRunning(), `the server stays up:\n${gateway.output()}`);
    await postgres.start();
    const [run] = await waitForRuns(gateway, id, 1);
    assert.equal(run.status, 'COMPLETED');
    await sleep(1_000);
    const listed = await runs(gateway, id);
    assert.equal(listed.length, 1, `started once: ${JSON.stringify(listed)}`);
    assert.equal((await schedule(gateway, id)).total_runs, 1);
  });
});
