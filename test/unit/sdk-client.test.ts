import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import {
  AgentgateClient, AuthenticationError, ConnectionError, NotFoundError, ROUTES_BY_GROUP, ServerError, TaskFailedError, type TaskEvent,
} from '../../packages/sdk/src/index.ts';

/** A stand-in gateway on 127.0.0.1: `answer` writes each response; every request is recorded. */
async function standIn(t: TestContext, answer: (request: http.IncomingMessage, response: http.ServerResponse, body: string, count: number) => void) {
  const requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string; at: number }> = [];
  const server = http.createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    requests.push({ method: request.method!, url: request.url!, headers: request.headers, body, at: Date.now() });
    answer(request, response, body, requests.length);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const json = (response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

test('a read answered 503 with Retry-After is tried again after at least that long, then succeeds', async (t) => {
  const server = await standIn(t, (_request, response, _body, count) => (count === 1
    ? json(response, 503, { error: 'overloaded' }, { 'retry-after': '1' })
    : json(response, 200, { task_id: 't1', status: 'TASK_STATUS_RUNNING' })));
  const client = new AgentgateClient({ baseUrl: server.url, retry: { minDelayMs: 10 } });
  const task = await client.tasks.get('t1');
  assert.equal(task.status, 'TASK_STATUS_RUNNING');
  assert.equal(server.requests.length, 2);
  assert.ok(server.requests[1].at - server.requests[0].at >= 990, 'waited for Retry-After');
});

test('a submission carries a generated Idempotency-Key and is retried with the same key; a POST without one is not retried', async (t) => {
  const server = await standIn(t, (request, response, _body, count) => {
    if (request.url === '/api/v1/tasks' && count === 1) return json(response, 502, { error: 'bad gateway' });
    if (request.url === '/api/v1/auth/login') return json(response, 503, { error: 'try later' });
    json(response, 200, { task_id: 't1', status: 'STATUS_CODE_OK', created_at: 'now' }, { 'x-session-id': 's1' });
  });
  const client = new AgentgateClient({ baseUrl: server.url, retry: { minDelayMs: 10 } });
  const submitted = await client.tasks.submit({ query: 'q' });
  assert.equal(submitted.session_id, 's1');
  const keys = server.requests.map((request) => request.headers['idempotency-key']);
  assert.equal(keys.length, 2);
  assert.match(String(keys[0]), /^[0-9a-f-]{36}$/);
  assert.equal(keys[0], keys[1], 'the retry repeats the key');
  await client.tasks.submit({ query: 'q' }, { idempotencyKey: 'mine' });
  assert.equal(server.requests.at(-1)?.headers['idempotency-key'], 'mine');

  const before = server.requests.length;
  const refused = await client.auth.login({ email: 'a@example.test', password: 'p' }).catch((error: unknown) => error);
  assert.ok(refused instanceof ServerError && refused.status === 503, String(refused));
  assert.equal(server.requests.length, before + 1, 'credential routes are not retried');
});

test('retries are bounded: the last answer\'s typed error carries the status, code, message and Retry-After', async (t) => {
  const server = await standIn(t, (_request, response) => json(response, 503, { error: 'still starting', code: 'starting' }, { 'retry-after': '0' }));
  const client = new AgentgateClient({ baseUrl: server.url, retry: { retries: 2, minDelayMs: 5 } });
  const error = await client.sessions.list().catch((caught: unknown) => caught);
  assert.ok(error instanceof ServerError, String(error));
  assert.deepEqual([error.status, error.code, error.message, error.retryAfterSeconds], [503, 'starting', 'still starting', 0]);
  assert.equal(server.requests.length, 3);
  const none = new AgentgateClient({ baseUrl: server.url, retry: false });
  await assert.rejects(none.sessions.list(), ServerError);
  assert.equal(server.requests.length, 4, 'retry: false sends once');
});

test('no server at all is a ConnectionError; the OpenAI layer\'s error shape is read too', async (t) => {
  const gone = await standIn(t, () => {});
  const client = new AgentgateClient({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 1, minDelayMs: 5 } });
  const error = await client.tasks.list().catch((caught: unknown) => caught);
  assert.ok(error instanceof ConnectionError, String(error));
  assert.equal(error.status, 0);
  void gone;
  const openai = await standIn(t, (_request, response) => json(response, 401, { error: { message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key' } }));
  const denied = await new AgentgateClient({ baseUrl: openai.url }).openai.models().catch((caught: unknown) => caught);
  assert.ok(denied instanceof AuthenticationError, String(denied));
  assert.deepEqual([denied.code, denied.message], ['invalid_api_key', 'Invalid API key']);
});

const frame = (event: Partial<TaskEvent> & { seq: number; type: string }, name = event.type) =>
  `id: 1-${event.seq}\nevent: ${name}\ndata: ${JSON.stringify({ workflow_id: 'w', agent_id: null, message: null, timestamp: 't', stream_id: `1-${event.seq}`, ...event })}\n\n`;

test('a stream resumes from the last seq after a drop and a shutdown notice, skipping what the server sends again', async (t) => {
  const server = await standIn(t, (request, response, _body, count) => {
    if (request.url?.startsWith('/api/v1/tasks/')) return json(response, 200, { status: 'TASK_STATUS_RUNNING' });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (count === 1) {
      // Dropped mid-stream, without the end of the chunked body, once the frames are on their way.
      response.write(': connected\n\n' + frame({ seq: 1, type: 'WORKFLOW_STARTED' }) + frame({ seq: 2, type: 'LLM_PARTIAL', delta: 'Hel' }, 'thread.message.delta'),
        () => response.socket?.destroy());
      return;
    }
    if (count === 2) {
      // Replays from the start (as a server that ignored the resume point would), then announces its shutdown.
      response.write(frame({ seq: 1, type: 'WORKFLOW_STARTED' }) + frame({ seq: 2, type: 'LLM_PARTIAL', delta: 'Hel' }, 'thread.message.delta')
        + frame({ seq: 3, type: 'LLM_PARTIAL', delta: 'lo' }, 'thread.message.delta')
        + `id: 1-3\nevent: error\ndata: ${JSON.stringify({ type: 'ERROR_OCCURRED', code: 'server_shutdown', last_event_id: '1-3' })}\n\n`);
      return response.end();
    }
    response.end(frame({ seq: 4, type: 'WORKFLOW_COMPLETED' }) + 'id: 1-5\nevent: done\ndata: [DONE]\n\n');
  });
  const client = new AgentgateClient({ baseUrl: server.url });
  const events: TaskEvent[] = [];
  for await (const event of client.tasks.stream('w', { types: ['LLM_PARTIAL', 'WORKFLOW_COMPLETED'] })) events.push(event);
  assert.deepEqual(events.map((event) => event.seq), [1, 2, 3, 4]);
  assert.equal(events.filter((event) => event.type === 'LLM_PARTIAL').map((event) => event.delta).join(''), 'Hello');
  const opens = server.requests.filter((request) => request.url.startsWith('/api/v1/stream/sse'));
  assert.deepEqual(opens.map((request) => request.headers['last-event-id']), [undefined, '2', '3']);
  assert.match(opens[0].url, /workflow_id=w&types=LLM_PARTIAL%2CWORKFLOW_COMPLETED/);
});

test('a stream ends with the server\'s typed error when opening it is refused, and on a revoked credential', async (t) => {
  const server = await standIn(t, (request, response) => {
    if (request.url?.includes('workflow_id=gone')) return json(response, 404, { error: 'Task not found' });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(frame({ seq: 1, type: 'WORKFLOW_STARTED' }) + `event: error\ndata: ${JSON.stringify({ type: 'ERROR_OCCURRED', code: 'credential_revoked', message: 'the API key was revoked' })}\n\n`);
  });
  const client = new AgentgateClient({ baseUrl: server.url });
  await assert.rejects(async () => { for await (const _ of client.tasks.stream('gone')) { /* nothing */ } }, NotFoundError);
  await assert.rejects(async () => { for await (const _ of client.tasks.stream('w')) { /* nothing */ } }, (error: unknown) => error instanceof AuthenticationError && /revoked/.test(error.message));
});

/** Arguments for the calls that take more than an id. */
const ARGUMENTS: Record<string, unknown[]> = {
  'tasks.submit': [{ query: 'q' }], 'tasks.list': [], 'tasks.submitForStream': [{ query: 'q' }], 'tasks.setBudget': ['x', 10],
  'sessions.list': [], 'sessions.rename': ['x', 'title'], 'sessions.setBudget': ['x', 10], 'sessions.file': ['x', 'dir/a b.txt'],
  'approvals.list': [], 'approvals.decide': [{ workflow_id: 'w', approval_id: 'a', approved: true }], 'reviews.act': ['x', { action: 'approve' }],
  'swarm.message': ['x', 'hello'], 'schedules.create': [{ name: 'n', cron_expression: '* * * * *', task_query: 'q' }], 'schedules.list': [],
  'schedules.update': ['x', { name: 'n' }], 'tools.list': [], 'tools.execute': ['x', { arguments: {} }], 'skills.list': [],
  'agents.list': [], 'agents.avatarPresets': [], 'agents.sync': [], 'agents.execute': ['x', { input: {} }],
  'auth.register': [{ email: 'e', password: 'p' }], 'auth.login': [{ email: 'e', password: 'p' }], 'auth.refresh': ['r'], 'auth.me': [],
  'auth.keys.create': [{ name: 'n' }], 'auth.keys.list': [], 'probes.health': [], 'probes.readiness': [], 'probes.metrics': [],
  'openai.models': [], 'openai.chatCompletions': [{ model: 'm', messages: [] }],
};

test('each SDK call sends the method and path of the route it declares', async (t) => {
  const server = await standIn(t, (request, response) => {
    if (request.url?.startsWith('/api/v1/stream/sse')) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      return response.end('event: done\ndata: [DONE]\n\n');
    }
    json(response, 200, { events: [], next_after_seq: null });
  });
  const client = new AgentgateClient({ baseUrl: server.url }) as unknown as Record<string, any>;
  for (const [group, routes] of Object.entries(ROUTES_BY_GROUP)) {
    const target = group.split('.').reduce((object, key) => object[key], client);
    for (const [method, route] of Object.entries(routes)) {
      if (route === 'GET /api/v1/stream/ws') continue;  // a WebSocket, not fetch (the integration test opens one)
      const before = server.requests.length;
      const result = target[method](...(ARGUMENTS[`${group}.${method}`] ?? ['x']));
      if (typeof result?.[Symbol.asyncIterator] === 'function') for await (const _ of result) { /* drain */ }
      else await result;
      const sent = server.requests[before];
      const [verb, template] = route.split(' ');
      const pattern = new RegExp(`^${template.replace('{*}', 'dir/a%20b\\.txt').replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`);
      assert.equal(sent?.method, verb, `${group}.${method}`);
      assert.match(sent.url, pattern, `${group}.${method} → ${route}`);
    }
  }
});

test('a stream whose server stays unreachable gives up with ConnectionError stream_lost; a 503 on opening is tried again', async (t) => {
  const client = new AgentgateClient({ baseUrl: 'http://127.0.0.1:9' });
  const lost = await (async () => { for await (const _ of client.tasks.stream('w', { reconnectForMs: 300 })) { /* nothing */ } })().catch((error: unknown) => error);
  assert.ok(lost instanceof ConnectionError, String(lost));
  assert.equal(lost.code, 'stream_lost');

  const server = await standIn(t, (_request, response, _body, count) => {
    if (count === 1) return json(response, 503, { error: 'starting' }, { 'retry-after': '0' });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(frame({ seq: 1, type: 'WORKFLOW_COMPLETED' }) + 'event: done\ndata: [DONE]\n\n');
  });
  const events: TaskEvent[] = [];
  for await (const event of new AgentgateClient({ baseUrl: server.url }).tasks.stream('w')) events.push(event);
  assert.deepEqual(events.map((event) => event.type), ['WORKFLOW_COMPLETED']);
  assert.equal(server.requests.length, 2);
});

test('wait returns the final status, events and view; with throwOnFailure a failed task is a TaskFailedError', async (t) => {
  const server = await standIn(t, (request, response) => {
    if (request.url?.startsWith('/api/v1/tasks/')) return json(response, 200, { task_id: 'w', status: 'TASK_STATUS_FAILED', error: 'the plan has a cycle (x, y)', result: '' });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(frame({ seq: 1, type: 'WORKFLOW_STARTED' }) + frame({ seq: 2, type: 'ERROR_OCCURRED', message: 'the plan has a cycle (x, y)', payload: { status: 'FAILED' } }, 'error') + 'event: done\ndata: [DONE]\n\n');
  });
  const client = new AgentgateClient({ baseUrl: server.url });
  const { task, events, view } = await client.tasks.wait('w');
  assert.equal(task.status, 'TASK_STATUS_FAILED');
  assert.deepEqual(events.map((event) => event.type), ['WORKFLOW_STARTED', 'ERROR_OCCURRED'], 'a stored error event is an event, not a control frame');
  assert.deepEqual([view.status, view.error], ['failed', 'the plan has a cycle (x, y)']);
  const thrown = await client.tasks.wait('w', { throwOnFailure: true }).catch((error: unknown) => error);
  assert.ok(thrown instanceof TaskFailedError, String(thrown));
  assert.match(thrown.message, /TASK_STATUS_FAILED: the plan has a cycle/);
});
