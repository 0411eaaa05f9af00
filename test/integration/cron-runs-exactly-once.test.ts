import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startGateway, waitFor, type Gateway } from '../helpers/gateway.ts';

/** Per-minute schedules allowed; both processes look for due runs ten times a second, so they race for every one. */
const env = { SCHEDULE_MIN_INTERVAL_MINS: '1', SCHEDULE_POLL_INTERVAL_MS: '100' };

async function twoProcesses(t: Parameters<typeof startGateway>[0]): Promise<[Gateway, Gateway]> {
  const first = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'scheduler-a' } });
  const second = await startGateway(t, { databaseUrl: first.databaseUrl, env: { ...env, EXECUTOR_ID: 'scheduler-b' } });
  return [first, second];
}

async function runRows(gateway: Gateway, scheduleId: string) {
  const { rows } = await gateway.sql.query(
    'select scheduled_for, task_id, skip_reason from schedule_runs where schedule_id = $1 order by scheduled_for', [scheduleId]);
  return rows as Array<{ scheduled_for: Date; task_id: string | null; skip_reason: string | null }>;
}

async function taskCount(gateway: Gateway, scheduleId: string): Promise<number> {
  const { rows } = await gateway.sql.query('select count(*)::int as count from tasks where schedule_id = $1', [scheduleId]);
  return rows[0].count;
}

// The two tests run side by side: the first is over in seconds while the second waits for minute boundaries.
describe('schedules raced by two processes', { concurrency: 2 }, () => {
  test('forty schedules due at the same instant, two processes racing for them: each starts exactly one task', async (t) => {
    const [first] = await twoProcesses(t);
    const ids: string[] = [];
    for (let index = 0; index < 40; index++) {
      const created = await first.request('POST', '/api/v1/schedules', { name: `race ${index}`, cron_expression: '0 0 * * *', task_query: `race ${index}` });
      assert.equal(created.status, 201, created.text);
      ids.push(created.body.schedule_id);
    }
    await first.sql.query('update schedules set next_run_at = now() where id = any($1)', [ids]);
    await waitFor('every schedule to run', async () => {
      const { rows } = await first.sql.query('select count(*)::int as count from schedule_runs where schedule_id = any($1)', [ids]);
      return rows[0].count >= ids.length ? true : undefined;
    });
    // Give a second firing of any of them every chance to happen.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { rows } = await first.sql.query(`
      select s.id, s.total_runs, (select count(*)::int from tasks where schedule_id = s.id) as tasks,
        (select count(*)::int from schedule_runs where schedule_id = s.id) as runs
      from schedules s where s.id = any($1)`, [ids]);
    for (const row of rows) assert.deepEqual([row.total_runs, row.tasks, row.runs], [1, 1, 1], row.id);
  });

  test('a schedule due every minute, two processes on one Postgres, one killed -9 and restarted: exactly one task per minute for three minutes', async (t) => {
    const [first, second] = await twoProcesses(t);
    const created = await second.request('POST', '/api/v1/schedules', { name: 'every minute', cron_expression: '* * * * *', task_query: 'tick' });
    assert.equal(created.status, 201, created.text);
    const id = created.body.schedule_id;
    const waitForRuns = (count: number) => waitFor(`run ${count}`, async () => ((await runRows(second, id)).length >= count ? true : undefined), 75_000);

    // The first occurrence is the minute just begun, due at once as for a process a few seconds late (within
    // SCHEDULE_CATCHUP_SECONDS): both processes still race for it, and the test waits for two boundaries, not three.
    await second.sql.query("update schedules set next_run_at = date_trunc('minute', now()) where id = $1 and total_runs = 0", [id]);
    await waitForRuns(1);
    await first.kill('SIGKILL');
    await waitForRuns(2);
    await first.restart();
    await waitForRuns(3);
    await second.request('POST', `/api/v1/schedules/${id}/pause`);

    const runs = await runRows(second, id);
    const firstThree = runs.slice(0, 3);
    assert.ok(firstThree.every((run) => run.task_id !== null && run.skip_reason === null), JSON.stringify(runs));
    assert.ok(firstThree.every((run) => run.scheduled_for.getTime() % 60_000 === 0), 'each run is for a minute of the expression');
    assert.deepEqual(firstThree.slice(1).map((run, index) => run.scheduled_for.getTime() - firstThree[index].scheduled_for.getTime()), [60_000, 60_000]);
    assert.equal(await taskCount(second, id), runs.length, 'one task per run, none twice');
    const { rows } = await second.sql.query('select total_runs from schedules where id = $1', [id]);
    assert.equal(rows[0].total_runs, runs.length);
  });
});
