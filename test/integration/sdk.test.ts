import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import {
  AgentgateClient, AuthenticationError, BadRequestError, ConflictError, NotFoundError, ROUTES_BY_GROUP, answerText, taskPlan, type TaskEvent,
} from '../../packages/sdk/src/index.ts';
import { GENERATED_PATH, typesForDocument } from '../../packages/sdk/scripts/openapi-types.ts';
import { registerAccount } from '../helpers/accounts.ts';
import { useGateway, waitFor, type Gateway } from '../helpers/gateway.ts';

const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

describe('the SDK against a gateway with authentication', () => {
  const gateway = useGateway({ env: authEnv });
  const shared = gateway;

  test('its calls cover every route in /openapi.json, each declared by a method that exists', async () => {
    const document = (await gateway().request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const served = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    const client = new AgentgateClient({ baseUrl: gateway().url }) as unknown as Record<string, unknown>;
    const covered: string[] = [];
    for (const [group, routes] of Object.entries(ROUTES_BY_GROUP)) {
      const target = group.split('.').reduce<any>((object, key) => object[key], client);
      for (const [method, route] of Object.entries(routes)) {
        assert.equal(typeof target[method], 'function', `${group}.${method} is a method`);
        covered.push(route);
      }
    }
    assert.deepEqual([...new Set(covered)].sort(), covered.sort(), 'each route has one SDK call');
    assert.deepEqual(covered.sort(), served.sort());
    const readme = await readFile(new URL('../../packages/sdk/README.md', import.meta.url), 'utf8');
    const undocumented = Object.entries(ROUTES_BY_GROUP).flatMap(([group, routes]) => Object.keys(routes).map((method) => `${group}.${method}(`)).filter((call) => !readme.includes(call));
    assert.deepEqual(undocumented, [], 'packages/sdk/README.md documents every call');
  });

  test('the committed generated types are those of the served /openapi.json', async () => {
    const document = (await gateway().request('GET', '/openapi.json')).body;
    const committed = await readFile(GENERATED_PATH, 'utf8');
    assert.ok(committed === await typesForDocument(document), 'packages/sdk/src/generated/openapi.ts is stale: run `npm run generate -w @agentgate/sdk`');
  });

  test('errors are typed classes carrying the status, a code and the server\'s message', async () => {
    const anonymous = new AgentgateClient({ baseUrl: gateway().url, apiKey: 'sk_test_not-a-real-key' });
    const denied = await anonymous.tasks.list().catch((error: unknown) => error);
    assert.ok(denied instanceof AuthenticationError, String(denied));
    assert.equal(denied.status, 401);
    assert.equal(denied.code, 'unauthorized');
    assert.equal(denied.message, 'Invalid API key');

    const account = await registerAccount(gateway(), 'sdk-errors');
    const client = new AgentgateClient({ baseUrl: gateway().url, apiKey: account.apiKey });
    const missing = await client.tasks.get('00000000-0000-4000-8000-000000000000').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError, String(missing));
    assert.equal(missing.status, 404);
    const malformed = await client.tasks.submit({ query: 'x', mode: 'sideways' as 'simple' }).catch((error: unknown) => error);
    assert.ok(malformed instanceof BadRequestError, String(malformed));
    assert.match(malformed.message, /mode/);

    const me = await client.auth.me();
    assert.equal(me.email, account.email);
  });

  test('submit, wait and the event helpers: the answer equals the stored result; a finished task cannot be paused', async () => {
    const account = await registerAccount(gateway(), 'sdk-wait');
    const client = new AgentgateClient({ baseUrl: gateway().url, apiKey: account.apiKey });
    const submitted = await client.tasks.submit({ query: 'compare postgres and mysql', mode: 'standard' });
    assert.ok(submitted.session_id, 'the session id header is passed on');
    const { task, events, view } = await client.tasks.wait(submitted.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.equal(view.answer, task.result);
    assert.equal(answerText(events), task.result);
    assert.ok(taskPlan(events)?.subtasks.length, 'the plan is read from the events');
    assert.ok([...view.agents.values()].every((agent) => agent.status === 'completed'), 'each agent finished');
    assert.deepEqual(events.map((event) => event.seq), events.map((_, index) => index + 1));
    const history = await client.tasks.allEvents(submitted.task_id);
    const streamed = new Set(events.map((event) => event.stream_id));
    assert.deepEqual(history.filter((event) => !streamed.has(event.stream_id)).map((event) => event.type), ['STREAM_END'], 'the stream ends at STREAM_END (not yielded)');
    const conflict = await client.tasks.pause(submitted.task_id).catch((error: unknown) => error);
    assert.ok(conflict instanceof ConflictError, String(conflict));
    assert.equal(conflict.status, 409);
  });

  test('the WebSocket stream authenticates with the client\'s headers; the OpenAI layer\'s calls answer', async () => {
    const account = await registerAccount(gateway(), 'sdk-ws');
    const client = new AgentgateClient({ baseUrl: gateway().url, apiKey: account.apiKey });
    const { task_id } = await client.tasks.submit({ query: 'over a socket' });
    const socket = client.streams.websocket(task_id);
    const types: string[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('message', (message) => {
        const event = JSON.parse(String(message.data)) as { type: string };
        types.push(event.type);
        if (event.type === 'STREAM_END') resolve();
      });
      socket.addEventListener('error', () => reject(new Error('socket error')));
      socket.addEventListener('close', () => resolve());
    });
    socket.close();
    assert.equal(types[0], 'WORKFLOW_STARTED');
    assert.equal(types.at(-1), 'STREAM_END');

    const models = await client.openai.models();
    const model = models.data[0].id;
    assert.equal((await client.openai.model(model)).id, model);
    const completion = await client.openai.chatCompletions({ model, messages: [{ role: 'user', content: 'hello' }] });
    assert.match(String(completion.choices[0].message.content), /Mock answer/);
    let text = '';
    for await (const chunk of client.openai.chatCompletionChunks({ model, messages: [{ role: 'user', content: 'hello' }] })) {
      text += (chunk as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content ?? '';
    }
    assert.match(text, /Mock answer/);
    const textCompletion = await client.openai.textCompletions({ model, prompt: 'hello', max_tokens: 100 });
    assert.equal(textCompletion.object, 'text_completion');
    assert.match(textCompletion.choices[0].text, /Mock answer/);
    let streamedText = '';
    for await (const chunk of client.openai.textCompletionChunks({ model, prompt: 'hello', max_tokens: 100 })) {
      streamedText += (chunk as { choices?: Array<{ text?: string }> }).choices?.[0]?.text ?? '';
    }
    assert.match(streamedText, /Mock answer/);
    await assert.rejects(client.openai.textCompletions({ model, prompt: 'hello', suffix: 'x' }), /suffix is not supported/);
  });

  test('an aborted call rejects with the signal\'s reason', async () => {
    const account = await registerAccount(gateway(), 'sdk-abort');
    const client = new AgentgateClient({ baseUrl: gateway().url, apiKey: account.apiKey });
    const { task_id } = await client.tasks.submit({ query: 'slow', context: { mock_delay_ms: 5_000 } });
    const controller = new AbortController();
    const seen: TaskEvent[] = [];
    const reading = (async () => { for await (const event of client.tasks.stream(task_id, { signal: controller.signal })) seen.push(event); })();
    await waitFor('the first events', async () => (seen.length > 0 ? true : undefined));
    controller.abort(new Error('enough'));
    await assert.rejects(reading, /enough/);
    await assert.rejects(client.tasks.get(task_id, { signal: AbortSignal.abort(new Error('never sent')) }), /never sent/);
    await client.tasks.cancel(task_id);
  });

  test('a submission retried by the SDK after a dropped response creates one task', async (t) => {
    const gateway = shared();
    const account = await registerAccount(gateway, 'sdk-retry');
    const proxy = await dropFirstAnswerProxy(gateway, (request) => request.method === 'POST' && request.url === '/api/v1/tasks');
    t.after(() => proxy.close());
    const client = new AgentgateClient({ baseUrl: proxy.url, apiKey: account.apiKey, retry: { minDelayMs: 50 } });
    const submitted = await client.tasks.submit({ query: 'exactly once' });
    assert.equal(proxy.dropped(), 1, 'the first answer was dropped');
    assert.equal(submitted.replayed, true, 'the retry got the stored first answer');
    const { rows } = await gateway.sql.query(`select id from tasks where query = 'exactly once'`);
    assert.deepEqual(rows.map((row) => row.id), [submitted.task_id]);
    await client.tasks.wait(submitted.task_id);
  });

  // Last: it kills and restarts the gateway the other tests share.
  test('a stream opened by the SDK survives the server being killed and restarted mid-answer: gap-free, and the text is the stored result', async () => {
    const gateway = shared();
    const account = await registerAccount(gateway, 'sdk-restart');
    const client = new AgentgateClient({ baseUrl: gateway.url, apiKey: account.apiKey });
    const { task_id } = await client.tasks.submit({ query: 'a long answer please', context: { mock_answer_words: 120, mock_delay_ms: 4_000 } });
    const events: TaskEvent[] = [];
    const reconnects: unknown[] = [];
    let killed = false;
    for await (const event of client.tasks.stream(task_id, { onReconnect: (info) => reconnects.push(info.reason) })) {
      events.push(event);
      if (!killed && events.filter((seen) => seen.type === 'LLM_PARTIAL').length === 10) {
        killed = true;
        await gateway.kill('SIGKILL');
        await gateway.restart();
      }
    }
    assert.ok(killed && reconnects.length > 0, 'the stream was cut and resumed');
    assert.deepEqual(events.map((event) => event.seq), events.map((_, index) => index + 1), 'no event lost or repeated');
    assert.equal(events.at(-1)?.type, 'WORKFLOW_COMPLETED', 'the stream ended at the task\'s end');
    const task = await client.tasks.get(task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.equal(answerText(events), task.result);
    const deltas = events.filter((event) => event.type === 'LLM_PARTIAL' && event.payload?.final_answer === true).map((event) => event.delta).join('');
    assert.equal(deltas, task.result, 'the streamed text, joined across the restart, is the stored result');
  });
});

/** A 127.0.0.1 proxy to the gateway that forwards the first matching request, then drops its answer (closes the socket). */
async function dropFirstAnswerProxy(gateway: Gateway, matches: (request: http.IncomingMessage) => boolean) {
  let dropped = 0;
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk);
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>;
    const answer = await fetch(gateway.url + request.url, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = Buffer.from(await answer.arrayBuffer());
    if (dropped === 0 && matches(request)) {
      dropped += 1;
      request.socket.destroy();
      return;
    }
    response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(name))));
    response.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropped: () => dropped,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
