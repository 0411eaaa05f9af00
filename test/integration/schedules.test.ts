import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, type Gateway } from '../helpers/gateway.ts';
import { fixedTimeRun, nthWeekday, offsetAt } from '../helpers/zone-rules.ts';

const valid = { name: 'Morning report', cron_expression: '0 8 * * 1-5', task_query: 'Research X and report' };

async function create(gateway: Gateway, body: unknown) {
  return gateway.request('POST', '/api/v1/schedules', body);
}

async function createOk(gateway: Gateway, body: Record<string, unknown> = {}): Promise<string> {
  const created = await create(gateway, { ...valid, ...body });
  assert.equal(created.status, 201, created.text);
  return created.body.schedule_id;
}

async function scheduleCount(gateway: Gateway): Promise<number> {
  const { rows } = await gateway.sql.query('select count(*)::int as count from schedules');
  return rows[0].count;
}

describe('schedule routes', () => {
  const gateway = useGateway();

  it('creates a schedule: 201 with its id, a message and the next run; the record reads back with spec 2.10\'s fields and defaults', async () => {
    const created = await create(gateway(), { ...valid, description: 'weekday mornings', timezone: 'Europe/Berlin', task_context: { role: 'research' } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['message', 'next_run_at', 'schedule_id']);
    assert.equal(created.body.message, 'Schedule created successfully');
    assert.ok(Date.parse(created.body.next_run_at) > Date.now());
    const schedule = (await gateway().request('GET', `/api/v1/schedules/${created.body.schedule_id}`)).body;
    assert.deepEqual({ ...schedule, created_at: undefined, updated_at: undefined }, {
      id: created.body.schedule_id, schedule_id: created.body.schedule_id, user_id: '00000000-0000-0000-0000-000000000002',
      name: 'Morning report', description: 'weekday mornings', cron_expression: '0 8 * * 1-5', timezone: 'Europe/Berlin',
      task_query: 'Research X and report', task_context: { role: 'research' }, max_budget_per_run_usd: 10, timeout_seconds: 600,
      status: 'ACTIVE', paused_at: null, pause_reason: null, api_key_id: null, next_run_at: created.body.next_run_at, last_run_at: null,
      total_runs: 0, successful_runs: 0, failed_runs: 0, created_at: undefined, updated_at: undefined,
    });
  });

  it('refuses 30 bad inputs with 400 and the spec\'s messages, and stores nothing', async () => {
    const before = await scheduleCount(gateway());
    const cases: Array<[string, unknown, RegExp]> = [
      ['six fields', { ...valid, cron_expression: '* * * * * *' }, /^Invalid cron expression: expected 5 fields/],
      ['four fields', { ...valid, cron_expression: '* * * *' }, /^Invalid cron expression/],
      ['empty expression', { ...valid, cron_expression: '' }, /^Invalid cron expression/],
      ['minute 61', { ...valid, cron_expression: '61 * * * *' }, /^Invalid cron expression: .*minute/i],
      ['hour 24', { ...valid, cron_expression: '0 24 * * *' }, /^Invalid cron expression/],
      ['a nickname', { ...valid, cron_expression: '@daily' }, /^Invalid cron expression/],
      ['a non-standard L', { ...valid, cron_expression: '0 0 L * *' }, /^Invalid cron expression: day of month field "L" is not standard cron/],
      ['never runs', { ...valid, cron_expression: '0 0 31 2 *' }, /^Invalid cron expression: it never runs/],
      ['every 5 minutes under the 60-minute minimum', { ...valid, cron_expression: '*/5 * * * *' }, /^Interval too short: runs 5 minutes apart; the minimum is 60 minutes/],
      ['twice an hour', { ...valid, cron_expression: '0,30 9 * * *' }, /^Interval too short: runs 30 minutes apart/],
      ['unknown time zone', { ...valid, timezone: 'Mars/Olympus' }, /^Invalid timezone: "Mars\/Olympus"/],
      ['empty time zone', { ...valid, timezone: '' }, /^Invalid timezone/],
      ['a fixed offset is not a zone', { ...valid, timezone: '+02:00' }, /^Invalid timezone/],
      ['budget 10.01', { ...valid, max_budget_per_run_usd: 10.01 }, /^max_budget_per_run_usd must be at most 10 \(SCHEDULE_MAX_BUDGET_USD\)/],
      ['budget 0', { ...valid, max_budget_per_run_usd: 0 }, /^invalid max_budget_per_run_usd: must be > 0/],
      ['budget as text', { ...valid, max_budget_per_run_usd: '5' }, /^invalid max_budget_per_run_usd: must be number/],
      ['name of 256 characters', { ...valid, name: 'n'.repeat(256) }, /^invalid name: must NOT have more than 255 characters/],
      ['blank name', { ...valid, name: '   ' }, /^name is required/],
      ['empty query', { ...valid, task_query: '' }, /^task_query is required/],
      ['blank query', { ...valid, task_query: ' \n ' }, /^task_query is required/],
      ['no name', { cron_expression: valid.cron_expression, task_query: valid.task_query }, /^name is required/],
      ['no expression', { name: valid.name, task_query: valid.task_query }, /^cron_expression is required/],
      ['no query', { name: valid.name, cron_expression: valid.cron_expression }, /^task_query is required/],
      ['name as a number', { ...valid, name: 5 }, /^invalid name: must be string/],
      ['expression as a number', { ...valid, cron_expression: 123 }, /^invalid cron_expression: must be string/],
      ['fractional timeout', { ...valid, timeout_seconds: 1.5 }, /^invalid timeout_seconds: must be integer/],
      ['timeout as text', { ...valid, timeout_seconds: '60' }, /^invalid timeout_seconds: must be integer/],
      ['timeout 0', { ...valid, timeout_seconds: 0 }, /^invalid timeout_seconds: must be >= 1/],
      ['timeout over the task limit', { ...valid, timeout_seconds: 100_000 }, /^timeout_seconds must be at most 1800 \(TASK_TIMEOUT_SECONDS\)/],
      ['context as text', { ...valid, task_context: 'context' }, /^invalid task_context: must be object/],
      ['unknown role in the context', { ...valid, task_context: { role: 'wizard' } }, /^unknown role: wizard/],
      ['a key the server sets', { ...valid, task_context: { trigger_type: 'schedule' } }, /^context.trigger_type is set by the server/],
      ['a misspelt field', { ...valid, time_zone: 'UTC' }, /unknown field in body: time_zone/],
      ['description as a number', { ...valid, description: 7 }, /^invalid description: must be string/],
      ['a list instead of an object', [valid], /must be object/],
    ];
    for (const [name, body, message] of cases) {
      const answer = await create(gateway(), body);
      assert.equal(answer.status, 400, `${name}: ${answer.status} ${answer.text}`);
      assert.match(answer.body.error, message, name);
    }
    const malformed = await gateway().requestRaw('POST', '/api/v1/schedules', '{"name": "x",', { 'content-type': 'application/json' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error, 'invalid JSON body');
    assert.equal(await scheduleCount(gateway()), before, 'nothing was stored');
  });

  it('an update changes any subset, is checked as a whole, and a new expression or zone moves the next run', async () => {
    const id = await createOk(gateway(), { cron_expression: '0 8 * * *', timezone: 'UTC' });
    const before = (await gateway().request('GET', `/api/v1/schedules/${id}`)).body;
    const renamed = await gateway().request('PUT', `/api/v1/schedules/${id}`, { name: 'Renamed', max_budget_per_run_usd: 2.5 });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.name, 'Renamed');
    assert.equal(renamed.body.max_budget_per_run_usd, 2.5);
    assert.equal(renamed.body.next_run_at, before.next_run_at, 'the same times: the same next run');
    const moved = await gateway().request('PUT', `/api/v1/schedules/${id}`, { timezone: 'Asia/Kolkata' });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(new Date(moved.body.next_run_at).getUTCHours() * 60 + new Date(moved.body.next_run_at).getUTCMinutes(), 2 * 60 + 30, '08:00 in Kolkata is 02:30 UTC');
    for (const [body, message] of [
      [{ cron_expression: '*/10 * * * *' }, /^Interval too short/], [{ timezone: 'Nowhere/Land' }, /^Invalid timezone/],
      [{ cron_expression: '0 0 0 0 0' }, /^Invalid cron expression/], [{ name: '' }, /^name is required/],
      [{ max_budget_per_run_usd: 11 }, /at most 10/], [{ task_context: {}, clear_task_context: true }, /not both/], [{ status: 'PAUSED' }, /unknown field in body: status/],
    ] as const) {
      const answer = await gateway().request('PUT', `/api/v1/schedules/${id}`, body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.error, message);
    }
    const after = (await gateway().request('GET', `/api/v1/schedules/${id}`)).body;
    assert.deepEqual([after.name, after.timezone, after.cron_expression, after.max_budget_per_run_usd], ['Renamed', 'Asia/Kolkata', '0 8 * * *', 2.5], 'refused updates changed nothing');
    const cleared = await gateway().request('PUT', `/api/v1/schedules/${id}`, { clear_task_context: true });
    assert.deepEqual(cleared.body.task_context, {});
  });

  it('pause, pause again (409), resume (recomputes the next run), resume again (no change), then delete (404 afterwards)', async () => {
    const id = await createOk(gateway());
    const paused = await gateway().request('POST', `/api/v1/schedules/${id}/pause`, { reason: 'holidays' });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.message, 'Schedule paused');
    assert.ok(Date.parse(paused.body.paused_at) <= Date.now());
    const read = (await gateway().request('GET', `/api/v1/schedules/${id}`)).body;
    assert.deepEqual([read.status, read.pause_reason, read.next_run_at], ['PAUSED', 'holidays', null]);
    const again = await gateway().request('POST', `/api/v1/schedules/${id}/pause`, undefined, { 'content-type': 'application/json' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'Schedule already paused');
    const listed = await gateway().request('GET', '/api/v1/schedules?status=PAUSED');
    assert.ok(listed.body.schedules.some((schedule: { id: string }) => schedule.id === id));
    const resumed = await gateway().request('POST', `/api/v1/schedules/${id}/resume`);
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.body.message, 'Schedule resumed');
    assert.ok(Date.parse(resumed.body.next_run_at) > Date.now());
    const active = (await gateway().request('GET', `/api/v1/schedules/${id}`)).body;
    assert.deepEqual([active.status, active.paused_at, active.pause_reason, active.next_run_at], ['ACTIVE', null, null, resumed.body.next_run_at]);
    const resumedAgain = await gateway().request('POST', `/api/v1/schedules/${id}/resume`, {});
    assert.deepEqual([resumedAgain.status, resumedAgain.body.next_run_at], [200, resumed.body.next_run_at]);
    // A client that sends a JSON content type on a body-less DELETE (Shannon's SDK does).
    const deleted = await gateway().request('DELETE', `/api/v1/schedules/${id}`, undefined, { 'content-type': 'application/json' });
    assert.deepEqual([deleted.status, deleted.body], [200, { message: 'Schedule deleted successfully' }]);
    for (const [method, path] of [['GET', ''], ['PUT', ''], ['GET', '/runs'], ['POST', '/pause'], ['POST', '/resume'], ['DELETE', '']]) {
      const answer = await gateway().request(method, `/api/v1/schedules/${id}${path}`, method === 'PUT' ? { name: 'x' } : undefined);
      assert.deepEqual([answer.status, answer.body.error], [404, 'Schedule not found'], `${method} ${path}`);
    }
  });

  it('lists a page at a time, newest first, each item the whole record, with total and total_count', async () => {
    const ids = [await createOk(gateway(), { name: 'page one' }), await createOk(gateway(), { name: 'page two' }), await createOk(gateway(), { name: 'page three' })];
    const first = await gateway().request('GET', '/api/v1/schedules?page=1&page_size=2');
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.schedules.map((schedule: { id: string }) => schedule.id), [ids[2], ids[1]]);
    assert.deepEqual(first.body.schedules[0], (await gateway().request('GET', `/api/v1/schedules/${ids[2]}`)).body, 'an item is the record (spec 2.10; the Shannon SDK reads created_at and task_query)');
    assert.equal(first.body.total, first.body.total_count);
    assert.deepEqual([first.body.page, first.body.page_size], [1, 2]);
    const second = await gateway().request('GET', '/api/v1/schedules?page=2&page_size=2');
    assert.equal(second.body.schedules[0].id, ids[0]);
    const defaults = await gateway().request('GET', '/api/v1/schedules');
    assert.deepEqual([defaults.body.page, defaults.body.page_size], [1, 50]);
    for (const query of ['page_size=101', 'page=0', 'status=DELETED', 'page_size=abc']) {
      assert.equal((await gateway().request('GET', `/api/v1/schedules?${query}`)).status, 400, query);
    }
    assert.equal((await gateway().request('GET', '/api/v1/schedules/not-a-uuid')).status, 400);
  });

  it('next runs across the coming daylight-saving changes match the zones\' published rules', async () => {
    const now = Date.now();
    const year = new Date(now).getUTCFullYear();
    // The first year whose change is still ahead, and the pattern of that day at the time the change affects.
    const upcoming = (transition: (y: number) => { month: number; day: number }) => {
      for (const y of [year, year + 1]) {
        const { month, day } = transition(y);
        if (Date.UTC(y, month - 1, day + 1) > now) return { y, month, day };
      }
      throw new Error('no upcoming change');
    };
    const cases = [
      { zone: 'America/New_York', hour: 2, ...upcoming((y) => ({ month: 3, day: nthWeekday(y, 3, 0, 2) })) },
      { zone: 'America/New_York', hour: 1, ...upcoming((y) => ({ month: 11, day: nthWeekday(y, 11, 0, 1) })) },
      { zone: 'Europe/Berlin', hour: 2, ...upcoming((y) => ({ month: 3, day: nthWeekday(y, 3, 0, -1) })) },
      { zone: 'Europe/Berlin', hour: 2, ...upcoming((y) => ({ month: 10, day: nthWeekday(y, 10, 0, -1) })) },
    ];
    for (const { zone, hour, y, month, day } of cases) {
      const id = await createOk(gateway(), { cron_expression: `30 ${hour} ${day} ${month} *`, timezone: zone });
      const { next_run_at: next } = (await gateway().request('GET', `/api/v1/schedules/${id}`)).body;
      assert.equal(next, new Date(fixedTimeRun(zone, y, month, day, hour, 30)).toISOString(), `${zone} ${y}-${month}-${day} ${hour}:30`);
    }
    const id = await createOk(gateway(), { cron_expression: '0 8 * * 1-5', timezone: 'Asia/Kolkata' });
    const { next_run_at: next } = (await gateway().request('GET', `/api/v1/schedules/${id}`)).body;
    let expected = 0;
    for (let day = 0; !expected; day++) {
      const date = new Date(now + day * 86_400_000 + offsetAt('Asia/Kolkata', now));
      const at = fixedTimeRun('Asia/Kolkata', date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), 8, 0);
      if (at > now && ![0, 6].includes(date.getUTCDay())) expected = at;
    }
    assert.equal(next, new Date(expected).toISOString(), 'Asia/Kolkata weekdays at 08:00');
  });
});

describe('schedule limits', () => {
  const gateway = useGateway();

  it('the 51st schedule of a user is a 403, even when the last ones are created at once', async () => {
    for (let index = 0; index < 45; index++) await createOk(gateway(), { name: `schedule ${index}` });
    const racing = await Promise.all(Array.from({ length: 10 }, (_, index) => create(gateway(), { ...valid, name: `racing ${index}` })));
    assert.deepEqual(racing.map((answer) => answer.status).sort(), [...Array(5).fill(201), ...Array(5).fill(403)]);
    const refused = racing.find((answer) => answer.status === 403)!;
    assert.equal(refused.body.error, 'Schedule limit reached: at most 50 schedules per user (SCHEDULE_MAX_PER_USER)');
    assert.equal(await scheduleCount(gateway()), 50);
    const ids = (await gateway().request('GET', '/api/v1/schedules?page_size=1')).body;
    assert.equal(ids.total, 50);
    // A deleted schedule frees its place.
    await gateway().request('DELETE', `/api/v1/schedules/${ids.schedules[0].id}`);
    assert.equal((await create(gateway(), valid)).status, 201);
    assert.equal((await create(gateway(), valid)).status, 403);
  });
});
