import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import { registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', WORKER_CONCURRENCY: '64', TENANT_WORKER_SHARE: '0.5' };
const RUN_MS = 1_500;

type Sql = { query: (text: string, values?: unknown[]) => Promise<{ rows: Array<{ count: number }> }> };

/** Paused tasks whose workflow reached a checkpoint and reported the pause. */
async function pausedCount(sql: Sql, tenantId: string) {
  const { rows } = await sql.query(`select count(*)::int as count from tasks t where t.tenant_id = $1 and t.pause_requested
    and exists (select 1 from task_events e where e.task_id = t.id and e.type = 'WORKFLOW_PAUSED')`, [tenantId]);
  return rows[0].count;
}

async function parkedCount(sql: Sql, tenantId: string) {
  const { rows } = await sql.query('select count(*)::int as count from tasks where tenant_id = $1 and parked_at_step is not null', [tenantId]);
  return rows[0].count;
}

describe('fairness between tenants', () => {
  const gateway = useGateway({ env });
  let noisy: Account;
  let quiet: Account;

  before(async () => {
    noisy = await registerAccount(gateway(), 'noisy');
    quiet = await registerAccount(gateway(), 'quiet');
  });

  it('64 paused and 200 queued tasks of one tenant delay another tenant\'s task by less than one task\'s run time', async (t) => {
    const submit = (account: Account, delayMs: number) => gateway().request('POST', '/api/v1/tasks', { query: 'work', context: { mock_delay_ms: delayMs } }, withKey(account));
    // A task that started before its pause arrived parks at its next checkpoint: after its answer, for a simple
    // task in one step. The runs are long enough that every pause lands before the answer, even on a busy machine
    // (at 2 s, 64 submissions and their pauses took longer than a run under the whole suite's load: a task answered
    // before its pause came and never paused).
    const paused = await Promise.all(Array.from({ length: 64 }, () => submit(noisy, 8_000)));
    const pauses = await Promise.all(paused.map((task) => gateway().request('POST', `/api/v1/tasks/${task.body.task_id}/pause`, undefined, withKey(noisy))));
    assert.deepEqual(pauses.filter((answer) => answer.status >= 300).map((answer) => answer.text), [], 'every pause was accepted');
    await waitFor('all 64 tasks to pause', async () => await pausedCount(gateway().sql, noisy.tenantId) === 64 || undefined, 60_000);
    for (let batch = 0; batch < 4; batch++) await Promise.all(Array.from({ length: 50 }, () => submit(noisy, 60_000)));
    await waitFor('the noisy tenant to take its workers', async () => {
      const { rows } = await gateway().sql.query(`select count(*)::int as count from tasks where tenant_id = $1 and status = 'RUNNING'`, [noisy.tenantId]);
      return rows[0].count > 0 || undefined;
    }, 10_000).catch(() => {});

    const started = Date.now();
    const task = await submit(quiet, RUN_MS);
    const done = await waitForTask(gateway(), task.body.task_id, 30_000, withKey(quiet));
    const elapsed = Date.now() - started;
    assert.equal(done.status, 'TASK_STATUS_COMPLETED');
    const { rows } = await gateway().sql.query(`select extract(epoch from started_at - created_at) * 1000 as waited from tasks where id = $1`, [task.body.task_id]);
    assert.ok(Number(rows[0].waited) < RUN_MS, `waited ${Math.round(Number(rows[0].waited))} ms in the queue (one run is ${RUN_MS} ms)`);
    assert.ok(elapsed < 2 * RUN_MS + 1_000, `answered in ${elapsed} ms`);
    t.diagnostic(`the quiet tenant's task waited ${Math.round(Number(rows[0].waited))} ms in the queue and was answered in ${elapsed} ms (run time ${RUN_MS} ms)`);

    const { rows: noisyRunning } = await gateway().sql.query(`select count(*)::int as count from tasks where tenant_id = $1 and status = 'RUNNING'`, [noisy.tenantId]);
    assert.ok(noisyRunning[0].count <= 32, `the noisy tenant runs ${noisyRunning[0].count} tasks at once`);
  });

  it('paused tasks hold no worker: with every worker\'s task paused, the next task still runs; resume and cancel reach parked tasks', async () => {
    const solo = await registerAccount(gateway(), 'solo');
    const submit = (delayMs: number) => gateway().request('POST', '/api/v1/tasks', { query: 'work', context: { mock_delay_ms: delayMs } }, withKey(solo));
    // Long runs, so that every pause lands before the answer (as in the test above: at 200 ms, on a busy machine a
    // task answered before its pause came and never paused).
    const tasks = await Promise.all(Array.from({ length: 40 }, () => submit(8_000)));
    const pauses = await Promise.all(tasks.map((task) => gateway().request('POST', `/api/v1/tasks/${task.body.task_id}/pause`, undefined, withKey(solo))));
    assert.deepEqual(pauses.filter((answer) => answer.status >= 300).map((answer) => answer.text), [], 'every pause was accepted');
    await waitFor('all 40 tasks to pause', async () => await pausedCount(gateway().sql, solo.tenantId) === 40 || undefined, 60_000);

    const next = await submit(200);
    assert.equal((await waitForTask(gateway(), next.body.task_id, 15_000, withKey(solo))).status, 'TASK_STATUS_COMPLETED');

    const [toCancel, ...toResume] = tasks.map((task) => task.body.task_id as string);
    const cancel = await gateway().request('POST', `/api/v1/tasks/${toCancel}/cancel`, { reason: 'no longer needed' }, withKey(solo));
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(cancel.body.status, 'TASK_STATUS_CANCELLED');
    await Promise.all(toResume.map(async (id) => {
      const resumed = await gateway().request('POST', `/api/v1/tasks/${id}/resume`, undefined, withKey(solo));
      assert.equal(resumed.status, 202, resumed.text);
    }));
    for (const id of toResume) assert.equal((await waitForTask(gateway(), id, 30_000, withKey(solo))).status, 'TASK_STATUS_COMPLETED');
    const events = await gateway().sql.query(`select task_id, array_agg(type order by seq) as types from task_events where task_id = any($1) group by task_id`, [toResume]);
    for (const row of events.rows) {
      assert.equal(row.types.filter((type: string) => type === 'WORKFLOW_COMPLETED').length, 1, `${row.task_id}: one completion`);
      assert.equal(row.types.filter((type: string) => type === 'WORKFLOW_STARTED').length, 1, `${row.task_id}: started once`);
    }
    assert.equal(await parkedCount(gateway().sql, solo.tenantId), 0);
  });
});
