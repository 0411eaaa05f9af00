import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import { SignJWT } from 'jose';
import { registerAccount, type Account } from '../helpers/accounts.ts';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

const JWT_SECRET = 'test-secret-of-at-least-thirty-two-characters!';
const GUARDED_TABLES = ['tenants', 'users', 'memberships', 'api_keys', 'refresh_tokens', 'sessions', 'tasks', 'task_events', 'usage_records', 'token_reservations',
  'schedules', 'schedule_runs'];

const HOSTILE_IDS = [
  '../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', "1' OR '1'='1", '1;DROP TABLE tasks;--', '%00', '%E2%80%AE', '%F0%9F%92%A9',
  'a'.repeat(300), '00000000-0000-0000-0000-00000000000G', '{{7*7}}', '$(reboot)', '-1', '0', 'null', 'undefined', '%20',
];
const HOSTILE_STRINGS = ["'; DROP TABLE tasks; --", '../../../../etc/passwd', '\u0000', '\u202e\u200b', '😈'.repeat(50), '<script>alert(1)</script>', 'x'.repeat(5000)];
const HUGE_NUMBERS = [1e308, -1, 2 ** 53, -(2 ** 31), 3.5, Number.MAX_SAFE_INTEGER];

interface Probe { method: string; path: string; body?: unknown; raw?: string; headers?: Record<string, string> }

describe('hostile input across every route', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET, LOGIN_ATTEMPTS_PER_IP: '100000' } });
  let account: Account;
  let taskId: string;
  let sessionId: string;

  before(async () => {
    account = await registerAccount(gateway(), 'hostile');
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'a real task' }, { 'x-api-key': account.apiKey });
    taskId = task.body.task_id;
    sessionId = task.headers.get('x-session-id')!;
    await waitForTask(gateway(), taskId, 20_000, { 'x-api-key': account.apiKey });
  });

  async function probes(): Promise<Probe[]> {
    const list: Probe[] = [];
    const schedule = { name: 'hostile', cron_expression: '0 9 * * *', task_query: 'x' };
    const idRoutes = (id: string): Probe[] => [
      { method: 'GET', path: `/api/v1/tasks/${id}` }, { method: 'GET', path: `/api/v1/tasks/${id}/events` },
      { method: 'GET', path: `/api/v1/tasks/${id}/timeline` }, { method: 'GET', path: `/api/v1/tasks/${id}/control-state` },
      { method: 'POST', path: `/api/v1/tasks/${id}/pause` }, { method: 'POST', path: `/api/v1/tasks/${id}/cancel` },
      { method: 'PUT', path: `/api/v1/tasks/${id}/budget`, body: { token_budget: 5 } },
      { method: 'DELETE', path: `/api/v1/auth/api-keys/${id}` }, { method: 'GET', path: `/api/v1/stream/sse?workflow_id=${id}` },
      { method: 'GET', path: `/api/v1/sessions/${id}` }, { method: 'GET', path: `/api/v1/sessions/${id}/history` },
      { method: 'GET', path: `/api/v1/sessions/${id}/events` }, { method: 'PATCH', path: `/api/v1/sessions/${id}`, body: { title: 'x' } },
      { method: 'DELETE', path: `/api/v1/sessions/${id}` }, { method: 'GET', path: `/v1/models/${id}` },
      { method: 'GET', path: `/api/v1/schedules/${id}` }, { method: 'GET', path: `/api/v1/schedules/${id}/runs` },
      { method: 'PUT', path: `/api/v1/schedules/${id}`, body: { name: 'x' } }, { method: 'POST', path: `/api/v1/schedules/${id}/pause` },
      { method: 'POST', path: `/api/v1/schedules/${id}/resume` }, { method: 'DELETE', path: `/api/v1/schedules/${id}` },
    ];
    for (const id of HOSTILE_IDS) list.push(...idRoutes(id));
    for (const text of HOSTILE_STRINGS) {
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', session_id: text } });
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', mode: text } });
      list.push({ method: 'POST', path: '/api/v1/tasks/stream', body: { query: 'x', model_tier: text } });
      list.push({ method: 'GET', path: `/api/v1/tasks?status=${encodeURIComponent(text)}` });
      list.push({ method: 'GET', path: `/api/v1/stream/sse?workflow_id=${taskId}&last_event_id=${encodeURIComponent(text)}` });
      list.push({ method: 'POST', path: '/api/v1/auth/login', body: { email: text, password: text } });
      list.push({ method: 'POST', path: '/api/v1/auth/register', body: { email: text, password: 'long-enough-password' } });
      list.push({ method: 'POST', path: '/api/v1/auth/refresh', body: { refresh_token: text } });
      list.push({ method: 'POST', path: '/api/v1/auth/api-keys', body: { name: 'k', scopes: [text] } });
      list.push({ method: 'PUT', path: `/api/v1/sessions/${encodeURIComponent(text)}/budget`, body: { token_budget: 10 } });
      list.push({ method: 'POST', path: '/v1/chat/completions', body: { model: text, messages: [{ role: 'user', content: 'x' }] } });
      list.push({ method: 'POST', path: '/v1/chat/completions', body: { messages: [{ role: text, content: 'x' }] } });
      list.push({ method: 'GET', path: `/api/v1/sessions?limit=${encodeURIComponent(text)}` });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, cron_expression: text } });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, timezone: text } });
      list.push({ method: 'GET', path: `/api/v1/schedules?status=${encodeURIComponent(text)}` });
    }
    for (const value of HUGE_NUMBERS) {
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', max_iterations: value } });
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', max_concurrent_agents: value } });
      list.push({ method: 'GET', path: `/api/v1/tasks?limit=${value}` });
      list.push({ method: 'GET', path: `/api/v1/tasks/${taskId}/events?limit=${value}` });
      list.push({ method: 'PUT', path: `/api/v1/tasks/${taskId}/budget`, body: { token_budget: value === 3.5 ? 3.5 : -Math.abs(value) } });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, max_budget_per_run_usd: value === 3.5 ? 1e308 : -Math.abs(value) } });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, timeout_seconds: value } });
      list.push({ method: 'GET', path: `/api/v1/schedules?page_size=${value}` });
    }
    for (const body of [[], 'query', 42, null, { query: ['x'] }, { query: { $ne: null } }, { query: 'x', context: [] }, { query: 'x', context: { prompt_params: 'no' } },
      { query: 'x', enable_verification: 'yes' }, { query: 'x'.repeat(200_001) }]) {
      list.push({ method: 'POST', path: '/api/v1/tasks', body });
    }
    for (const raw of ['{', '{"query": "x",}', '{"query": "\\ud800"', 'null', '\u0000', '{"__proto__": {"admin": true}}']) {
      list.push({ method: 'POST', path: '/api/v1/tasks', raw });
      list.push({ method: 'POST', path: '/api/v1/auth/login', raw });
    }
    list.push({ method: 'POST', path: '/api/v1/tasks', raw: JSON.stringify({ query: 'x'.repeat(1_100_000) }) });
    list.push({ method: 'POST', path: `/api/v1/tasks/${taskId}/pause`, body: { reason: 'x'.repeat(5000) } });
    list.push({ method: 'POST', path: `/api/v1/tasks/${taskId}/pause` }, { method: 'POST', path: `/api/v1/tasks/${taskId}/resume` });
    list.push({ method: 'POST', path: '/api/v1/auth/api-keys', body: { name: 'k', expires_at: '2000-01-01T00:00:00Z' } });
    list.push({ method: 'POST', path: '/api/v1/auth/api-keys', body: { name: 'k', user_id: '00000000-0000-0000-0000-000000000002' } });
    list.push({ method: 'POST', path: '/api/v1/auth/register', body: { email: 'short@example.test', password: 'short' } });
    list.push({ method: 'POST', path: '/v1/chat/completions', body: { messages: [] } });
    list.push({ method: 'POST', path: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'x' }], n: 5 } });
    list.push({ method: 'POST', path: '/v1/chat/completions', raw: '{"messages": [' });
    list.push({ method: 'POST', path: '/api/v1/auth/register', body: { email: 'extra@example.test', password: 'long-enough-password', role: 'owner' } });
    // Text Postgres cannot store (NUL), that is not Unicode (a lone surrogate), nesting that overflows a stack,
    // and resume points beyond the range of a seq: each a 400 naming the field, never a 500 (issue 11, S9).
    for (const bad of ['a\u0000b', '\udfff', 'x\ud800y']) {
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: bad } });
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', context: { note: bad } } });
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', context: { system_prompt: bad } } });
      list.push({ method: 'POST', path: '/api/v1/tasks', body: { query: 'x', context: { [bad]: 1 } } });
      list.push({ method: 'POST', path: '/api/v1/tasks/stream', body: { query: bad } });
      list.push({ method: 'POST', path: '/api/v1/auth/api-keys', body: { name: bad } });
      list.push({ method: 'POST', path: '/api/v1/auth/register', body: { email: 'nul@example.test', password: 'long-enough-password', name: bad } });
      list.push({ method: 'PATCH', path: `/api/v1/sessions/${sessionId}`, body: { title: bad } });
      list.push({ method: 'POST', path: '/v1/chat/completions', body: { messages: [{ role: 'user', content: bad }] } });
      list.push({ method: 'POST', path: '/v1/chat/completions', body: { messages: [{ role: 'system', content: bad }, { role: 'user', content: 'x' }] } });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, name: bad } });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, task_query: bad } });
      list.push({ method: 'POST', path: '/api/v1/schedules', body: { ...schedule, task_context: { note: bad } } });
    }
    list.push({ method: 'GET', path: '/api/v1/tasks?session_id=a%00b' }, { method: 'GET', path: '/api/v1/sessions/a%00b' });
    list.push({ method: 'POST', path: '/api/v1/tasks', raw: `{"query":"x","context":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}` });
    list.push({ method: 'POST', path: '/api/v1/tasks', raw: `{"query":"x","context":{"list":${'['.repeat(10_000)}${']'.repeat(10_000)}}}` });
    list.push({ method: 'GET', path: `/api/v1/stream/sse?workflow_id=${taskId}&last_event_id=1-9999999999` });
    list.push({ method: 'GET', path: `/api/v1/stream/sse?workflow_id=${taskId}&last_event_id=99999999999999999-1` });
    list.push({ method: 'GET', path: `/api/v1/stream/sse?workflow_id=${taskId}`, headers: { 'x-api-key': account.apiKey, 'last-event-id': '4294967296' } });
    list.push({ method: 'GET', path: `/api/v1/stream/sse?workflow_id=${taskId}`, headers: { 'x-api-key': account.apiKey, 'last-event-id': '1-4294967296' } });
    list.push({ method: 'GET', path: `/api/v1/tasks/${taskId}/events?after_seq=9999999999` });
    return list;
  }

  async function credentialProbes(): Promise<Probe[]> {
    const claims = { tid: account.tenantId, role: 'owner', typ: 'access' };
    const sign = (secret: string, alg: string, expires: string | number) => new SignJWT(claims).setProtectedHeader({ alg })
      .setSubject(account.userId).setIssuer('agentgate').setAudience('agentgate-api').setIssuedAt().setExpirationTime(expires)
      .sign(new TextEncoder().encode(secret));
    const revoked = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'to revoke' }, { 'x-api-key': account.apiKey });
    await gateway().request('DELETE', `/api/v1/auth/api-keys/${revoked.body.id}`, undefined, { 'x-api-key': account.apiKey });
    const expired = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'to expire' }, { 'x-api-key': account.apiKey });
    await gateway().sql.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [expired.body.id]);
    const bad: Array<Record<string, string>> = [
      { authorization: `Bearer ${await sign(JWT_SECRET, 'HS256', Math.floor(Date.now() / 1000) - 5)}` },
      { authorization: `Bearer ${await sign('a-different-secret-thirty-two-chars-long', 'HS256', '5m')}` },
      { authorization: `Bearer ${await sign(JWT_SECRET, 'HS384', '5m')}` },
      { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
      { 'x-api-key': revoked.body.key }, { 'x-api-key': expired.body.key }, { 'x-api-key': "sk_live_' OR 1=1 --" },
      { 'x-api-key': account.apiKey, 'x-tenant-id': '00000000-0000-0000-0000-000000000001' },
      { 'x-api-key': account.apiKey, 'x-tenant-id': "'; DROP TABLE tenants; --" },
    ];
    const routes = [['GET', '/api/v1/tasks'], ['POST', '/api/v1/tasks'], ['GET', `/api/v1/tasks/${taskId}`], ['GET', '/api/v1/auth/me'], ['POST', '/api/v1/auth/api-keys']];
    return bad.flatMap((headers) => routes.map(([method, path]) => ({ method, path, headers, body: method === 'POST' ? { query: 'x', name: 'x' } : undefined })));
  }

  async function tableCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of GUARDED_TABLES) counts[table] = (await gateway().sql.query(`select count(*)::int as count from ${table}`)).rows[0].count;
    return counts;
  }

  it('every hostile request answers a 4xx in the error shape and changes nothing', async () => {
    const all = [...await probes(), ...await credentialProbes()];
    assert.ok(all.length >= 200, `${all.length} requests`);
    const before = await tableCounts();
    for (const probe of all) {
      const headers = probe.headers ?? { 'x-api-key': account.apiKey };
      const answer = probe.raw !== undefined
        ? await gateway().requestRaw(probe.method, probe.path, probe.raw, { 'content-type': 'application/json', ...headers })
        : await gateway().request(probe.method, probe.path, probe.body, headers);
      const label = `${probe.method} ${probe.path.slice(0, 120)} ${JSON.stringify(probe.body ?? probe.raw ?? '').slice(0, 80)} → ${answer.status} ${answer.text.slice(0, 200)}`;
      assert.ok(answer.status >= 400 && answer.status < 500, label);
      // The OpenAI layer nests its message ({error: {message}}); native routes answer {error: message}.
      const message = typeof answer.body?.error === 'object' ? answer.body.error?.message : answer.body?.error;
      assert.equal(typeof message, 'string', label);
    }
    assert.deepEqual(await tableCounts(), before);
  });
});
