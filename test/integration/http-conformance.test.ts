import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it, before } from 'node:test';
import { registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway } from '../helpers/gateway.ts';
import { readSse } from '../helpers/sse-client.ts';

const JSON_HEADER = { 'content-type': 'application/json' };

describe('what real clients send and read', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', CORS_ALLOWED_ORIGINS: 'https://app.example' } });
  let account: Account;

  before(async () => {
    account = await registerAccount(gateway(), 'clients');
  });

  it('an empty body sent as application/json is an absent body (Shannon\'s SDK sends that header on every call)', async () => {
    const headers = { ...withKey(account), ...JSON_HEADER };
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'long', session_id: 'sdk-session', context: { mock_delay_ms: 20_000 } }, withKey(account));
    const id = task.body.task_id;
    for (const [method, path, status] of [
      ['POST', `/api/v1/tasks/${id}/pause`, 202], ['POST', `/api/v1/tasks/${id}/resume`, 202], ['POST', `/api/v1/tasks/${id}/cancel`, 200],
      ['DELETE', '/api/v1/sessions/sdk-session', 204], ['POST', '/api/v1/auth/api-keys/refresh', 201],
    ] as const) {
      const answer = await gateway().requestRaw(method, path, '', headers);
      assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
      if (path.endsWith('/refresh')) account.apiKey = answer.body.key;
    }
    const missing = await gateway().requestRaw('POST', '/api/v1/tasks', '', { ...withKey(account), ...JSON_HEADER });
    assert.equal(missing.status, 400, 'a route that needs a body still says so');
    assert.equal(typeof missing.body.error, 'string');
  });

  it('a browser may read every header the service sends', async () => {
    const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'cors' }, { ...withKey(account), origin: 'https://app.example' });
    assert.equal(answer.headers.get('access-control-allow-origin'), 'https://app.example');
    const exposed = (answer.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests',
      'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-requests', 'retry-after', 'x-session-id', 'x-service-session-id',
      'x-workflow-id', 'x-model-description', 'etag', 'x-request-id', 'x-idempotency-cached', 'x-idempotency-key']) {
      assert.ok(exposed.includes(name), `${name} is exposed (${exposed.join(', ')})`);
    }
    for (const [name] of answer.headers) {
      if (name.startsWith('x-')) assert.ok(exposed.includes(name), `the service sent ${name}, which a browser cannot read`);
    }
  });
});

describe('HTTP timeouts (spec 8) for ordinary requests, not for streams', () => {
  const gateway = useGateway({ env: { HTTP_TIMEOUT_SECONDS: '2', SSE_PING_INTERVAL_MS: '60000', MOCK_DELAY_MS: '3000' } });

  it('a client that stalls in the middle of its request is cut off', async () => {
    const { port } = new URL(gateway().url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":');
    const started = Date.now();
    socket.resume();
    await once(socket, 'close');
    const waited = Date.now() - started;
    assert.ok(waited >= 1_500 && waited < 10_000, `closed after ${waited} ms`);
  });

  it('an SSE stream and a waiting chat completion stay open past the timeout', async () => {
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'quiet', context: { mock_delay_ms: 4_000, mock_answer_words: 2 } });
    const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${task.body.task_id}`, { timeoutMs: 20_000 });
    assert.equal(stream.status, 200);
    assert.ok(stream.closedByServer);
    assert.equal(stream.messages.at(-1)?.event, 'done', 'the stream ran to its end through 4 s of silence');
    const started = Date.now();
    const chat = await gateway().request('POST', '/v1/chat/completions', { model: 'service-chat', messages: [{ role: 'user', content: 'take your time' }], stream: false });
    assert.equal(chat.status, 200, chat.text);
    assert.ok(Date.now() - started >= 2_000, 'the completion was silent for longer than the timeout');
  });
});
