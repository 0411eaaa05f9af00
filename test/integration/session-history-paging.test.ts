import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { useGateway } from '../helpers/gateway.ts';

const TENANT = '00000000-0000-0000-0000-000000000001';
const USER = '00000000-0000-0000-0000-000000000002';
const MiB = 1024 * 1024;
/** The text budget of one history answer (query, result, error and metadata of its tasks). */
const PAGE_TEXT_BYTES = 4 * MiB;
/** What an oversize task keeps of each text field. */
const FIELD_BYTES = 1 * MiB;

describe('session history paging (S5)', () => {
  const gateway = useGateway();
  let foreignSession: string;
  let longSession: string;
  let bigSession: string;
  let oversizeSession: string;
  let eventsSession: string;

  const history = async (sessionId: string, query = '') => gateway().request('GET', `/api/v1/sessions/${sessionId}/history${query}`);
  const turns = async (sessionId: string, query = '') => gateway().request('GET', `/api/v1/sessions/${sessionId}/events${query}`);

  /** Inserts tasks straight into the table: `result` is SQL, so megabytes are built by Postgres, not sent. */
  async function insertTasks(sessionId: string, count: number, resultSql: string, secondsAt: (n: number) => number = (n) => n): Promise<void> {
    const seconds = Array.from({ length: count }, (_, index) => secondsAt(index + 1));
    await gateway().sql.query(`
      insert into tasks (id, tenant_id, user_id, session_id, query, status, result, created_at)
      select gen_random_uuid(), s.tenant_id, s.user_id, s.id, 'turn ' || n, 'COMPLETED', ${resultSql},
        timestamptz '2025-01-01' + make_interval(secs => ($3::int[])[n])
      from sessions s, generate_series(1, $2::int) n where s.id = $1`, [sessionId, count, seconds]);
  }

  async function insertSession(externalId: string, owner = { tenantId: TENANT, userId: USER }): Promise<string> {
    const id = randomUUID();
    await gateway().sql.query(`
      insert into sessions (id, tenant_id, user_id, external_id, token_budget, context, expires_at)
      values ($1, $2, $3, $4, 100000, '{}', now() + interval '30 days')`, [id, owner.tenantId, owner.userId, externalId]);
    return id;
  }

  async function insertTenant(): Promise<{ tenantId: string; userId: string }> {
    const tenantId = randomUUID();
    const userId = randomUUID();
    await gateway().sql.query(`insert into tenants (id, name, slug) values ($1, 'Other', $2)`, [tenantId, `other-${tenantId}`]);
    await gateway().sql.query(`insert into users (id, tenant_id, email) values ($1, $2, $3)`, [userId, tenantId, `${userId}@example.test`]);
    return { tenantId, userId };
  }

  /** Each task's final LLM_OUTPUT event repeats its result, as a finished workflow's does. */
  async function insertFinalOutputEvents(sessionId: string): Promise<void> {
    await gateway().sql.query(`
      insert into task_events (task_id, seq, stream_id, type, agent_id, message)
      select id, 1, '1-0', 'LLM_OUTPUT', 'final_output', result from tasks where session_id = $1`, [sessionId]);
  }

  /** Follows `next_offset` from 0 to the end; every answer stays under the budget. */
  async function walkPages(path: string, limit: number): Promise<any[]> {
    const pages = [];
    for (let offset: number | null = 0; offset !== null;) {
      const answer = await gateway().request('GET', `${path}?limit=${limit}&offset=${offset}`);
      assert.equal(answer.status, 200, answer.text);
      assert.ok(Buffer.byteLength(answer.text) < PAGE_TEXT_BYTES, `${path} at ${offset}: ${Buffer.byteLength(answer.text)} bytes`);
      pages.push(answer.body);
      offset = answer.body.next_offset;
      assert.equal(answer.body.has_more, offset !== null);
    }
    return pages;
  }

  const orderedTaskIds = async (sessionId: string): Promise<string[]> =>
    (await gateway().sql.query('select id from tasks where session_id = $1 order by created_at, id', [sessionId])).rows.map((row) => row.id);

  before(async () => {
    longSession = await insertSession('long-session');
    // Two tasks per second: pages must break ties the same way every time.
    await insertTasks(longSession, 45, `'answer ' || n`, (n) => Math.floor(n / 2));
    bigSession = await insertSession('big-session');
    await insertTasks(bigSession, 3, `repeat('x', ${3 * MiB})`);
    oversizeSession = await insertSession('oversize-session');
    await insertTasks(oversizeSession, 1, `repeat('x', ${6 * MiB})`);
    await insertTasks(oversizeSession, 1, `repeat('é', ${3 * MiB})`, () => 10);
    await insertTasks(oversizeSession, 1, `'small'`, () => 20);
    await insertFinalOutputEvents(oversizeSession);
    eventsSession = await insertSession('events-session');
    await insertTasks(eventsSession, 3, `repeat('y', ${1.5 * MiB})`);
    await insertFinalOutputEvents(eventsSession);
    foreignSession = await insertSession('foreign-session', await insertTenant());
    await insertTasks(foreignSession, 3, `'their secret'`);
  });

  it('answers 20 tasks by default, oldest first, with total, limit, offset, has_more and next_offset', async () => {
    const answer = await history('long-session');
    assert.equal(answer.status, 200, answer.text);
    const ids = await orderedTaskIds(longSession);
    assert.equal(answer.body.session_id, longSession);
    assert.equal(answer.body.tasks.length, 20);
    assert.deepEqual(answer.body.tasks.map((task: any) => task.task_id), ids.slice(0, 20));
    assert.deepEqual([answer.body.total, answer.body.limit, answer.body.offset, answer.body.has_more, answer.body.next_offset], [45, 20, 0, true, 20]);
    const last = await history('long-session', '?offset=40');
    assert.deepEqual(last.body.tasks.map((task: any) => task.task_id), ids.slice(40));
    assert.deepEqual([last.body.total, last.body.limit, last.body.offset, last.body.has_more, last.body.next_offset], [45, 20, 40, false, null]);
    const past = await history('long-session', '?offset=100');
    assert.deepEqual([past.body.tasks, past.body.total, past.body.has_more, past.body.next_offset], [[], 45, false, null]);
  });

  it('walking the pages returns every task exactly once, in order', async () => {
    const pages = await walkPages(`/api/v1/sessions/${longSession}/history`, 7);
    assert.deepEqual(pages.map((page) => page.tasks.length), [7, 7, 7, 7, 7, 7, 3]);
    const seen = pages.flatMap((page) => page.tasks.map((task: any) => task.task_id));
    assert.deepEqual(seen, await orderedTaskIds(longSession));
    assert.equal(new Set(seen).size, 45);
  });

  for (const [query, field] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=abc', 'limit'], ['offset=-1', 'offset'], ['offset=abc', 'offset']]) {
    it(`answers 400 naming the field for ${query}`, async () => {
      const answer = await history('long-session', `?${query}`);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(typeof answer.body.error, 'string');
      assert.match(answer.body.error, new RegExp(field));
    });
  }

  it('accepts limit=100', async () => {
    const answer = await history('long-session', '?limit=100');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.tasks.length, 45);
    assert.equal(answer.body.has_more, false);
  });

  it("another tenant's session is 404, by UUID and by custom id, and shows nothing", async () => {
    for (const id of [foreignSession, 'foreign-session']) {
      const answer = await history(id);
      assert.equal(answer.status, 404, answer.text);
      assert.deepEqual(answer.body, { error: 'Session not found' });
    }
  });

  it('stops a page early at the text budget: 3 tasks of 3 MiB come one per page, whole', async () => {
    const pages = await walkPages('/api/v1/sessions/big-session/history', 100);
    assert.deepEqual(pages.map((page) => [page.tasks.length, page.total, page.has_more, page.next_offset]), [[1, 3, true, 1], [1, 3, true, 2], [1, 3, false, null]]);
    for (const page of pages) assert.equal(page.tasks[0].result, 'x'.repeat(3 * MiB), 'a task within the budget is never cut');
    assert.deepEqual(pages.map((page) => page.tasks[0].task_id), await orderedTaskIds(bigSession));
  });

  it('a task larger than the budget comes alone with its big fields cut, marked, on character boundaries', async () => {
    const first = await history('oversize-session');
    assert.equal(first.status, 200, first.text);
    assert.ok(Buffer.byteLength(first.text) < PAGE_TEXT_BYTES);
    assert.deepEqual([first.body.tasks.length, first.body.has_more, first.body.next_offset], [1, true, 1]);
    const ascii = first.body.tasks[0].result as string;
    assert.match(ascii, /^x+\n\[truncated: the first 1048576 of 6291456 bytes; GET \/api\/v1\/tasks\/[0-9a-f-]+ has the whole text\]$/);
    assert.equal(ascii.indexOf('\n'), FIELD_BYTES);

    const second = (await history('oversize-session', '?offset=1')).body;
    assert.deepEqual([second.tasks.length, second.has_more, second.next_offset], [1, true, 2]);
    const accented = second.tasks[0].result as string;
    const [text, marker] = accented.split('\n');
    assert.ok(Buffer.byteLength(text) <= FIELD_BYTES && Buffer.byteLength(text) > FIELD_BYTES - 2);
    assert.match(text, /^é+$/, 'cut between characters, never inside one');
    assert.match(marker, /^\[truncated: the first \d+ of 6291456 bytes;/);

    const third = (await history('oversize-session', '?offset=2')).body;
    assert.deepEqual([third.tasks.map((task: any) => task.result), third.has_more, third.next_offset], [['small'], false, null]);
  });

  it("session events count a turn's events in the budget: turns of 3 MiB (result and its LLM_OUTPUT) come one per page", async () => {
    const pages = await walkPages('/api/v1/sessions/events-session/events', 100);
    assert.deepEqual(pages.map((page) => [page.turns.length, page.count, page.has_more, page.next_offset]), [[1, 3, true, 1], [1, 3, true, 2], [1, 3, false, null]]);
    assert.deepEqual(pages.map((page) => page.turns[0].turn), [1, 2, 3]);
    for (const { turns: [turn] } of pages) {
      assert.equal(turn.final_output, 'y'.repeat(1.5 * MiB));
      assert.equal(turn.events[0].message, turn.final_output, 'a turn within the budget is never cut');
    }
    assert.deepEqual(pages.map((page) => page.turns[0].task_id), await orderedTaskIds(eventsSession));
  });

  it('an oversize turn comes alone with its output and its event messages cut and marked', async () => {
    const first = await turns('oversize-session');
    assert.equal(first.status, 200, first.text);
    assert.ok(Buffer.byteLength(first.text) < PAGE_TEXT_BYTES, `answer of ${Buffer.byteLength(first.text)} bytes`);
    assert.deepEqual([first.body.turns.length, first.body.has_more, first.body.next_offset], [1, true, 1]);
    const [turn] = first.body.turns;
    const marker = /^x{1048576}\n\[truncated: the first 1048576 of 6291456 bytes; GET \/api\/v1\/tasks\/[0-9a-f-]+ has the whole text\]$/;
    assert.match(turn.final_output, marker);
    assert.match(turn.events[0].message, marker);
    const last = (await turns('oversize-session', '?offset=2')).body;
    assert.deepEqual([last.turns[0].final_output, last.turns[0].events[0].message, last.has_more, last.next_offset], ['small', 'small', false, null]);
  });

  it('session summaries show the latest query cut to 1,000 characters and marked', async () => {
    const sessionId = await insertSession('long-query-session');
    await insertTasks(sessionId, 1, `'done'`);
    await gateway().sql.query(`update tasks set query = repeat('é', 200000) where session_id = $1`, [sessionId]);
    const detail = (await gateway().request('GET', '/api/v1/sessions/long-query-session')).body;
    assert.equal(detail.latest_task_query, `${'é'.repeat(1000)}…`);
    assert.equal(detail.title, `${'é'.repeat(40)}…`, 'the title comes from the first query as before');
    const listed = (await gateway().request('GET', '/api/v1/sessions?limit=100')).body.sessions.find((session: any) => session.session_id === sessionId);
    assert.equal(listed.latest_task_query, detail.latest_task_query);
    assert.match((await gateway().request('GET', '/api/v1/sessions/long-session')).body.latest_task_query, /^turn 4[45]$/, 'short queries are whole');
  });
});
