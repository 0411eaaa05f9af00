import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import WebSocket from 'ws';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

/** `sameTenant`: the answer to another member of the owner's tenant when it is not 403 (spec 4.6: session events hide). */
interface Probe { name: string; method: string; path: string; body?: unknown; changes?: boolean; sameTenant?: number }

function wsStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers });
    socket.on('unexpected-response', (_request, response) => { resolve(response.statusCode ?? 0); socket.terminate(); });
    socket.on('open', () => { resolve(101); socket.terminate(); });
    socket.on('error', () => resolve(0));
  });
}

describe('isolation between users and tenants', () => {
  const gateway = useGateway({ env });
  let alice: Account;
  let bob: Account;
  let carol: Account;
  let taskId: string;
  let sessionUuid: string;
  let scheduleId: string;
  const sessionId = 'alice-private-session';

  before(async () => {
    alice = await registerAccount(gateway(), 'alice');
    bob = await registerAccount(gateway(), 'bob');
    carol = await addMember(gateway(), alice, 'carol');
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'alice secret plans', session_id: sessionId, context: { mock_delay_ms: 30_000 } }, withKey(alice));
    taskId = task.body.task_id;
    sessionUuid = (await gateway().sql.query('select session_id from tasks where id = $1', [taskId])).rows[0].session_id;
    const schedule = await gateway().request('POST', '/api/v1/schedules', { name: 'alice secret plans', cron_expression: '0 8 * * *', task_query: 'alice secret plans' }, withKey(alice));
    assert.equal(schedule.status, 201, schedule.text);
    scheduleId = schedule.body.schedule_id;
  });

  const probes = (): Probe[] => [
    { name: 'task status', method: 'GET', path: `/api/v1/tasks/${taskId}` },
    { name: 'task events', method: 'GET', path: `/api/v1/tasks/${taskId}/events` },
    { name: 'task timeline', method: 'GET', path: `/api/v1/tasks/${taskId}/timeline` },
    { name: 'control state', method: 'GET', path: `/api/v1/tasks/${taskId}/control-state` },
    { name: 'SSE stream', method: 'GET', path: `/api/v1/stream/sse?workflow_id=${taskId}&last_event_id=999999` },
    { name: 'task budget', method: 'PUT', path: `/api/v1/tasks/${taskId}/budget`, body: { token_budget: 1 }, changes: true },
    { name: 'session budget', method: 'PUT', path: `/api/v1/sessions/${sessionUuid}/budget`, body: { token_budget: 1 }, changes: true },
    { name: 'session detail', method: 'GET', path: `/api/v1/sessions/${sessionUuid}` },
    { name: 'session history', method: 'GET', path: `/api/v1/sessions/${sessionUuid}/history` },
    { name: 'session events', method: 'GET', path: `/api/v1/sessions/${sessionUuid}/events`, sameTenant: 404 },
    { name: 'session rename', method: 'PATCH', path: `/api/v1/sessions/${sessionUuid}`, body: { title: 'hijacked' }, changes: true },
    { name: 'session delete', method: 'DELETE', path: `/api/v1/sessions/${sessionUuid}`, changes: true },
    { name: 'pause', method: 'POST', path: `/api/v1/tasks/${taskId}/pause`, changes: true },
    { name: 'cancel', method: 'POST', path: `/api/v1/tasks/${taskId}/cancel`, changes: true },
    // Schedules are isolated per user as well as per tenant (spec 4.7): another member's is not found either.
    { name: 'schedule', method: 'GET', path: `/api/v1/schedules/${scheduleId}`, sameTenant: 404 },
    { name: 'schedule runs', method: 'GET', path: `/api/v1/schedules/${scheduleId}/runs`, sameTenant: 404 },
    { name: 'schedule update', method: 'PUT', path: `/api/v1/schedules/${scheduleId}`, body: { name: 'hijacked' }, changes: true, sameTenant: 404 },
    { name: 'schedule pause', method: 'POST', path: `/api/v1/schedules/${scheduleId}/pause`, changes: true, sameTenant: 404 },
    { name: 'schedule resume', method: 'POST', path: `/api/v1/schedules/${scheduleId}/resume`, changes: true, sameTenant: 404 },
    { name: 'schedule delete', method: 'DELETE', path: `/api/v1/schedules/${scheduleId}`, changes: true, sameTenant: 404 },
  ];

  it('another tenant (404) and another member of the same tenant (403) can neither read nor change the owner\'s things', async () => {
    for (const [intruder, expected] of [[bob, 404], [carol, 403]] as const) {
      for (const probe of probes()) {
        const answer = await gateway().request(probe.method, probe.path, probe.body, withKey(intruder));
        const wanted = intruder === carol ? probe.sameTenant ?? expected : expected;
        assert.equal(answer.status, wanted, `${intruder.email} ${probe.name}: ${answer.status} ${answer.text}`);
        assert.ok(!answer.text.includes('secret plans'), `${probe.name} leaks nothing`);
      }
      const ws = await wsStatus(`${gateway().url.replace('http', 'ws')}/api/v1/stream/ws?workflow_id=${taskId}`, withKey(intruder));
      assert.equal(ws, expected, 'websocket');
      const list = await gateway().request('GET', '/api/v1/tasks', undefined, withKey(intruder));
      assert.equal(list.body.total_count, 0, 'lists show only the caller\'s tasks');
      const bySession = await gateway().request('GET', `/api/v1/tasks?session_id=${sessionId}`, undefined, withKey(intruder));
      assert.equal(bySession.body.total_count, 0);
      const sessions = await gateway().request('GET', '/api/v1/sessions', undefined, withKey(intruder));
      assert.ok(!sessions.text.includes(sessionUuid), 'session lists show only the caller\'s sessions');
      const schedules = await gateway().request('GET', '/api/v1/schedules', undefined, withKey(intruder));
      assert.equal(schedules.body.total, 0, 'schedule lists show only the caller\'s schedules');
    }
    const state = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`, undefined, withKey(alice));
    assert.deepEqual([state.body.is_paused, state.body.is_cancelled], [false, false], 'nothing was changed');
    const { rows } = await gateway().sql.query('select token_budget from tasks where id = $1', [taskId]);
    assert.notEqual(Number(rows[0].token_budget), 1);
    const session = await gateway().sql.query('select deleted_at, title from sessions where id = $1', [sessionUuid]);
    assert.equal(session.rows[0].deleted_at, null);
    assert.notEqual(session.rows[0].title, 'hijacked');
    const schedule = await gateway().sql.query('select name, status, deleted_at from schedules where id = $1', [scheduleId]);
    assert.deepEqual(schedule.rows[0], { name: 'alice secret plans', status: 'ACTIVE', deleted_at: null });
  });

  it('the owner can do all of it (so the refusals above are not missing routes)', async () => {
    for (const probe of probes().filter((item) => !item.changes && !item.path.includes('/stream/'))) {
      const answer = await gateway().request(probe.method, probe.path, probe.body, withKey(alice));
      assert.equal(answer.status, 200, `${probe.name}: ${answer.text}`);
    }
    const cancel = await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, undefined, withKey(alice));
    assert.equal(cancel.body.status, 'TASK_STATUS_CANCELLED');
  });

  it('the same custom session id used by two users gives two separate sessions', async () => {
    const own = await gateway().request('POST', '/api/v1/tasks', { query: 'bob in his session', session_id: sessionId }, withKey(bob));
    assert.equal(own.headers.get('x-session-id'), sessionId);
    const task = await waitForTask(gateway(), own.body.task_id, 20_000, withKey(bob));
    assert.match(task.result, /after 0 earlier messages/, 'bob sees none of alice\'s history');
    const { rows } = await gateway().sql.query('select count(distinct id)::int as count from sessions where external_id = $1', [sessionId]);
    assert.equal(rows[0].count, 2);
  });

  it('an idempotency key replayed by another user never returns the first user\'s answer', async () => {
    const headers = { 'idempotency-key': 'shared-key' };
    const first = await gateway().request('POST', '/api/v1/tasks', { query: 'idempotent' }, { ...withKey(alice), ...headers });
    const other = await gateway().request('POST', '/api/v1/tasks', { query: 'idempotent' }, { ...withKey(bob), ...headers });
    assert.notEqual(other.body.task_id, first.body.task_id);
    assert.equal(other.headers.get('x-idempotency-cached'), null);
  });

  const adminKey = async (admin: Account) => {
    const key = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'admin key', user_id: admin.userId, scopes: ['tasks:read', 'keys:manage', 'skills:dangerous'] },
      { authorization: `Bearer ${alice.accessToken}` });
    assert.equal(key.status, 201, key.text);
    return key.body.key as string;
  };

  it('an admin neither acts as nor disarms the owner: no keys for a higher role, no scopes beyond the target\'s role, no rotating or revoking the owner\'s keys', async () => {
    const dave = await addMember(gateway(), alice, 'dave');
    await gateway().sql.query(`update memberships set role = 'admin' where user_id = $1 and tenant_id = $2`, [dave.userId, alice.tenantId]);
    dave.apiKey = await adminKey(dave);
    const ownersKeys = await gateway().request('GET', '/api/v1/auth/api-keys', undefined, withKey(alice));
    const ownerKey = ownersKeys.body.api_keys.find((key: { user_id: string }) => key.user_id === alice.userId);
    const before = (await gateway().sql.query('select count(*)::int as count from api_keys')).rows[0].count;

    const forOwner = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'as owner', user_id: alice.userId, scopes: ['tasks:read'] }, withKey(dave));
    assert.equal(forOwner.status, 403, forOwner.text);
    const dangerous = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'dangerous', user_id: carol.userId, scopes: ['tasks:read', 'skills:dangerous'] }, withKey(dave));
    assert.equal(dangerous.status, 403, dangerous.text);
    assert.match(dangerous.body.error, /member role does not allow scopes: skills:dangerous/);
    const rotate = await gateway().request('POST', '/api/v1/auth/api-keys/refresh', { id: ownerKey.id }, withKey(dave));
    assert.equal(rotate.status, 403, rotate.text);
    const revoke = await gateway().request('DELETE', `/api/v1/auth/api-keys/${ownerKey.id}`, undefined, withKey(dave));
    assert.equal(revoke.status, 403, revoke.text);
    assert.equal((await gateway().request('GET', '/api/v1/auth/me', undefined, withKey(alice))).status, 200, 'the owner\'s key still works');
    assert.equal((await gateway().sql.query('select count(*)::int as count from api_keys')).rows[0].count, before, 'no key was created');

    const forMember = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'for carol', user_id: carol.userId, scopes: ['tasks:read'] }, withKey(dave));
    assert.equal(forMember.status, 201, 'an admin still manages members\' keys');
    assert.equal((await gateway().request('DELETE', `/api/v1/auth/api-keys/${forMember.body.id}`, undefined, withKey(dave))).status, 200);
  });

  it('a key\'s scopes shrink with its user\'s role: a demoted admin\'s all-scopes key acts as a member', async () => {
    const erin = await addMember(gateway(), alice, 'erin');
    await gateway().sql.query(`update memberships set role = 'admin' where user_id = $1 and tenant_id = $2`, [erin.userId, alice.tenantId]);
    erin.apiKey = await adminKey(erin);
    const wide = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'wide', scopes: ['tasks:read', 'skills:dangerous', 'keys:manage'] }, withKey(erin));
    assert.equal(wide.status, 201, wide.text);
    await gateway().sql.query(`update memberships set role = 'member' where user_id = $1 and tenant_id = $2`, [erin.userId, alice.tenantId]);
    const me = await gateway().request('GET', '/api/v1/auth/me', undefined, { 'x-api-key': wide.body.key });
    assert.deepEqual([...me.body.scopes].sort(), ['keys:manage', 'tasks:read']);
  });

  it('only owners and admins set a key\'s rate limit, and never above the tenant\'s plan', async () => {
    const fresh = await registerAccount(gateway(), 'fresh');
    await gateway().sql.query('update tenants set rate_limit_per_minute = null where id = $1', [fresh.tenantId]);
    const member = await addMember(gateway(), fresh, 'limited');
    const lift = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'fast', rate_limit_per_minute: 100_000 }, withKey(member));
    assert.equal(lift.status, 403, lift.text);
    const overPlan = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'fast', rate_limit_per_minute: 100_000 }, withKey(fresh));
    assert.equal(overPlan.status, 400, overPlan.text);
    assert.match(overPlan.body.error, /must not exceed 60/);
    const within = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'slow', rate_limit_per_minute: 10 }, withKey(fresh));
    assert.equal(within.status, 201, within.text);
  });

  it('a schedule runs as its owner: their task and tenant, their rate limit (a run over it waits), and none once they left the tenant', async () => {
    const dora = await registerAccount(gateway(), 'dora');
    // Made signed in, it runs as Dora herself (one made with a key runs as the key: schedule-credentials.test.ts).
    const created = await gateway().request('POST', '/api/v1/schedules', { name: 'dora daily', cron_expression: '0 6 * * *', task_query: 'dora report' },
      { authorization: `Bearer ${dora.accessToken}` });
    assert.equal(created.status, 201, created.text);
    const id = created.body.schedule_id;
    const runsOf = async () => (await gateway().request('GET', `/api/v1/schedules/${id}/runs`, undefined, withKey(dora))).body.runs;
    const makeDue = () => gateway().sql.query('update schedules set next_run_at = now() where id = $1', [id]);

    // Dora's own minute is used up: the run waits for it instead of going over. (Her key keeps a limit of its
    // own, so that this test's calls with it go through.)
    await gateway().sql.query('update tenants set rate_limit_per_minute = 2 where id = $1', [dora.tenantId]);
    await gateway().sql.query('update api_keys set rate_limit_per_minute = 1000 where user_id = $1', [dora.userId]);
    // The full window must outlast the check below: not within its minute's last 15 s (Postgres's clock, as the limiter's).
    const { rows: [clock] } = await gateway().sql.query('select extract(second from now())::float as second');
    if (clock.second > 45) await sleep((61 - clock.second) * 1000);
    await gateway().sql.query(`insert into rate_limit_windows (key, window_start, count) values ($1, floor(extract(epoch from now()) / 60) * 60, 2)
      on conflict (key, window_start) do update set count = 2`, [`rate:user:${dora.userId}`]);
    await makeDue();
    await sleep(2500);
    assert.deepEqual(await runsOf(), [], 'no run while the owner is over their rate limit');
    await gateway().sql.query('delete from rate_limit_windows where key = $1', [`rate:user:${dora.userId}`]);
    const [run] = await waitFor('the run once the minute is over', async () => ((await runsOf()).length > 0 ? runsOf() : undefined));
    const { rows: [task] } = await gateway().sql.query('select user_id, tenant_id from tasks where id = $1', [run.workflow_id]);
    assert.deepEqual(task, { user_id: dora.userId, tenant_id: dora.tenantId });
    assert.equal((await waitForTask(gateway(), run.workflow_id, 20_000, withKey(dora))).status, 'TASK_STATUS_COMPLETED');
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${run.workflow_id}`, undefined, withKey(alice))).status, 404);
    const { rows: [window] } = await gateway().sql.query('select count from rate_limit_windows where key = $1', [`rate:user:${dora.userId}`]);
    assert.equal(window.count, 1, 'the run counted as one request of its owner');

    // Dora is deactivated: her schedule does not run as her any more; it pauses, saying why.
    await gateway().sql.query('update users set is_active = false where id = $1', [dora.userId]);
    await makeDue();
    const paused = await waitFor('the schedule to pause', async () => {
      const { rows: [row] } = await gateway().sql.query('select status, pause_reason from schedules where id = $1', [id]);
      return row.status === 'PAUSED' ? row : undefined;
    });
    assert.equal(paused.pause_reason, 'Auto-paused: its owner is no longer an active member of the tenant');
    const { rows } = await gateway().sql.query('select task_id, skip_reason from schedule_runs where schedule_id = $1 order by scheduled_for', [id]);
    assert.deepEqual(rows.map((row) => [row.task_id === null, row.skip_reason]), [[false, null], [true, 'refused: its owner is no longer an active member of the tenant']]);
  });
});
