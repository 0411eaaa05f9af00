import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it, before } from 'node:test';
import WebSocket from 'ws';
import { registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitForTask } from '../helpers/gateway.ts';
import { readSse } from '../helpers/sse-client.ts';

const JWT_SECRET = 'test-secret-of-at-least-thirty-two-characters!';
const MAX_STREAMS = 5;
const env = {
  GATEWAY_SKIP_AUTH: '0', JWT_SECRET, MAX_STREAMS_PER_KEY: String(MAX_STREAMS), STREAM_CREDENTIAL_CHECK_SECONDS: '1', LOGIN_ATTEMPTS_PER_IP: '100000',
};

/** A plain GET (no Upgrade) on a kept-alive connection, as a proxy health check or a confused client sends. */
function plainGet(url: string, headers: Record<string, string>, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers, agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    }).on('error', reject);
  });
}

async function newKey(gateway: ReturnType<ReturnType<typeof useGateway>>, owner: Account, body: Record<string, unknown> = {}) {
  const key = await gateway.request('POST', '/api/v1/auth/api-keys', { name: 'probe', ...body }, withKey(owner));
  assert.equal(key.status, 201, key.text);
  return key.body as { id: string; key: string };
}

describe('limits a hostile client must not get around', { timeout: 120_000 }, () => {
  const gateway = useGateway({ env });
  let owner: Account;

  before(async () => {
    owner = await registerAccount(gateway(), 'limits');
  });

  it('S6: credential answers are never stored for Idempotency-Key replays, and a replayed refresh is refused', async () => {
    const headers = { ...withKey(owner), 'idempotency-key': 'create-key-once' };
    const first = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'retried' }, headers);
    const second = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'retried' }, headers);
    assert.equal(first.status, 201);
    assert.equal(second.headers.get('x-idempotency-cached'), null, 'the secret is not replayed');
    assert.notEqual(second.body.key, first.body.key);
    const stored = await gateway().sql.query(`select count(*)::int as count from idempotency_records where body like '%sk_%' or body like '%refresh_token%'`);
    assert.equal(stored.rows[0].count, 0, 'no stored answer holds a secret');

    const login = await gateway().request('POST', '/api/v1/auth/login', { email: owner.email, password: owner.password });
    const refreshHeaders = { 'idempotency-key': 'refresh-once' };
    const refreshed = await gateway().request('POST', '/api/v1/auth/refresh', { refresh_token: login.body.refresh_token }, refreshHeaders);
    assert.equal(refreshed.status, 200, refreshed.text);
    const replayed = await gateway().request('POST', '/api/v1/auth/refresh', { refresh_token: login.body.refresh_token }, refreshHeaders);
    assert.equal(replayed.status, 401, 'a rotated refresh token is not handed out again');
  });

  it('S6: idempotency records past their TTL are purged', async () => {
    await gateway().sql.query(`insert into idempotency_records (scope_hash, idempotency_key, state, expires_at) values ('expired-scope', 'old', 'completed', now() - interval '1 hour')`);
    await gateway().restart();
    const deadline = Date.now() + 10_000;
    let left = 1;
    while (left > 0 && Date.now() < deadline) {
      left = (await gateway().sql.query(`select count(*)::int as count from idempotency_records where scope_hash = 'expired-scope'`)).rows[0].count;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(left, 0);
  });

  it('S7: plain GETs to the WebSocket route take no stream slot for good', async () => {
    const key = await newKey(gateway(), owner);
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'short' }, { 'x-api-key': key.key });
    await waitForTask(gateway(), task.body.task_id, 20_000, { 'x-api-key': key.key });
    const agent = new http.Agent({ keepAlive: true });
    for (let i = 0; i < MAX_STREAMS * 3; i++) {
      const status = await plainGet(`${gateway().url}/api/v1/stream/ws?workflow_id=${task.body.task_id}`, { 'x-api-key': key.key }, agent);
      assert.ok(status >= 400 && status < 500, `plain GET answered ${status}`);
    }
    const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${task.body.task_id}`, { headers: { 'x-api-key': key.key }, timeoutMs: 10_000 });
    assert.equal(stream.status, 200, JSON.stringify(stream.body));
    agent.destroy();
  });

  it('S8: a stream opened before its key was revoked ends within the re-check interval (SSE and WebSocket)', async () => {
    const key = await newKey(gateway(), owner);
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'long', context: { mock_delay_ms: 30_000 } }, { 'x-api-key': key.key });
    let opened!: () => void;
    const open = new Promise<void>((resolve) => { opened = resolve; });
    const sse = readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${task.body.task_id}`, { headers: { 'x-api-key': key.key }, timeoutMs: 20_000, onOpen: () => opened() });
    const socket = new WebSocket(`${gateway().url.replace('http', 'ws')}/api/v1/stream/ws?workflow_id=${task.body.task_id}`, { headers: { 'x-api-key': key.key } });
    const wsOpen = new Promise((resolve) => socket.once('open', resolve));
    const wsClosed = new Promise<{ code: number; last: string }>((resolve) => {
      let last = '';
      socket.on('message', (data) => { last = String(data); });
      socket.on('close', (code) => resolve({ code, last }));
    });
    await open;
    await wsOpen;
    const revokedAt = Date.now();
    assert.equal((await gateway().request('DELETE', `/api/v1/auth/api-keys/${key.id}`, undefined, withKey(owner))).status, 200);

    const ended = await sse;
    const sseEndedMs = Date.now() - revokedAt;
    assert.ok(ended.closedByServer, 'the server ended the stream');
    const last = ended.messages.at(-1)!;
    assert.equal(last.event, 'error');
    assert.equal(JSON.parse(last.data).code, 'credential_revoked');
    assert.ok(sseEndedMs < 5_000, `SSE ended ${sseEndedMs} ms after the revocation`);
    const ws = await wsClosed;
    assert.equal(ws.code, 1008);
    assert.equal(JSON.parse(ws.last).code, 'credential_revoked');
    await gateway().request('POST', `/api/v1/tasks/${task.body.task_id}/cancel`, undefined, withKey(owner));
  });

  it('S10: a streaming chat completion with an Idempotency-Key leaves no claim behind; its retry streams the same task at once', async () => {
    const headers = { ...withKey(owner), 'content-type': 'application/json', 'idempotency-key': 'stream-once' };
    const body = JSON.stringify({ model: 'service-chat', stream: true, messages: [{ role: 'user', content: 'count to three' }] });
    const read = async () => {
      const started = Date.now();
      const response = await fetch(`${gateway().url}/v1/chat/completions`, { method: 'POST', headers, body });
      const text = await response.text();
      return { status: response.status, text, ms: Date.now() - started };
    };
    const first = await read();
    assert.equal(first.status, 200, first.text);
    assert.match(first.text, /data: \[DONE\]/);
    const claims = await gateway().sql.query(`select count(*)::int as count from idempotency_records where idempotency_key = 'stream-once'`);
    assert.equal(claims.rows[0].count, 0, 'nothing is left in progress');
    const retry = await read();
    assert.equal(retry.status, 200, retry.text);
    assert.match(retry.text, /data: \[DONE\]/);
    assert.ok(retry.ms < 5_000, `the retry answered in ${retry.ms} ms`);
    const tasks = await gateway().sql.query(`select count(*)::int as count from tasks where tenant_id = $1 and query like '%count to three%'`, [owner.tenantId]);
    assert.equal(tasks.rows[0].count, 1, 'the retry ran no second task');
  });

  it('S11: /v1/models answers to the rate limit, and streaming chat completions share the stream cap', async () => {
    const slow = await newKey(gateway(), owner, { rate_limit_per_minute: 3 });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await gateway().request('GET', '/v1/models', undefined, { 'x-api-key': slow.key }));
    assert.equal(answers[0].status, 200);
    assert.equal(answers[0].headers.get('x-ratelimit-limit'), '3');
    assert.ok(answers.slice(3).every((answer) => answer.status === 429), answers.map((answer) => answer.status).join());

    const key = await newKey(gateway(), owner);
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'long', context: { mock_delay_ms: 30_000 } }, { 'x-api-key': key.key });
    const controllers = Array.from({ length: MAX_STREAMS }, () => new AbortController());
    const opened = await Promise.all(controllers.map((controller) => fetch(`${gateway().url}/api/v1/stream/sse?workflow_id=${task.body.task_id}`, { headers: { 'x-api-key': key.key }, signal: controller.signal })));
    assert.deepEqual(opened.map((response) => response.status), Array(MAX_STREAMS).fill(200));
    const chat = await gateway().request('POST', '/v1/chat/completions', { model: 'service-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'x-api-key': key.key });
    assert.equal(chat.status, 429, chat.text);
    for (const controller of controllers) controller.abort();
    await gateway().request('POST', `/api/v1/tasks/${task.body.task_id}/cancel`, undefined, withKey(owner));
  });

  it('S11: a signed-in user has one request budget across all their tenants', async () => {
    const other = await registerAccount(gateway(), 'second-tenant');
    await gateway().sql.query(`insert into memberships (user_id, tenant_id, role) values ($1, $2, 'member')`, [owner.userId, other.tenantId]);
    await gateway().sql.query('update tenants set rate_limit_per_minute = 6 where id = any($1)', [[owner.tenantId, other.tenantId]]);
    try {
      const login = await gateway().request('POST', '/api/v1/auth/login', { email: owner.email, password: owner.password });
      const bearer = { authorization: `Bearer ${login.body.access_token}` };
      const byTenant: Record<string, number[]> = { [owner.tenantId]: [], [other.tenantId]: [] };
      for (let i = 0; i < 12; i++) {
        const tenant = i % 2 === 0 ? owner.tenantId : other.tenantId;
        byTenant[tenant].push((await gateway().request('GET', '/api/v1/tasks', undefined, { ...bearer, 'x-tenant-id': tenant })).status);
      }
      const all = Object.values(byTenant).flat();
      assert.ok(all.filter((status) => status === 200).length <= 6, JSON.stringify(byTenant));
      assert.ok(byTenant[other.tenantId].includes(429), `the second tenant shares the bucket: ${JSON.stringify(byTenant)}`);
    } finally {
      await gateway().sql.query('update tenants set rate_limit_per_minute = 100000 where id = any($1)', [[owner.tenantId, other.tenantId]]);
    }
  });

  it('S12: an own tenant id in upper case is the same tenant', async () => {
    const answer = await gateway().request('GET', '/api/v1/auth/me', undefined, { ...withKey(owner), 'x-tenant-id': owner.tenantId.toUpperCase() });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.tenant_id, owner.tenantId);
  });
});

describe('unauthenticated traffic', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET, LOGIN_ATTEMPTS_PER_IP: '20' } });

  it('S11: is throttled per address and audited once per window, not once per request', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const headers: Record<string, string> = i % 2 === 0 ? {} : { 'x-api-key': 'sk_live_not-a-real-key-at-all-0000000000' };
      statuses.push((await gateway().request('GET', '/api/v1/tasks', undefined, headers)).status);
    }
    assert.deepEqual(statuses.slice(0, 20), Array(20).fill(401));
    assert.deepEqual(statuses.slice(20), Array(20).fill(429));
    const audit = await gateway().sql.query(`select count(*)::int as count from audit_logs where event_type = 'auth_denied'`);
    assert.equal(audit.rows[0].count, 1);
  });
});
