import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { registerAccount } from '../helpers/accounts.ts';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { holdInserts } from '../helpers/held-inserts.ts';
import { parseSseText, readSse } from '../helpers/sse-client.ts';

describe('OpenAI-compatible layer with the official client', () => {
  const gateway = useGateway();
  const client = () => new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development', maxRetries: 0 });

  it('answers non-streaming and streaming requests, and the streamed text equals the non-streamed one', async () => {
    const messages = [{ role: 'system' as const, content: 'You are concise.' }, { role: 'user' as const, content: 'Name a prime number' }];
    const completion = await client().chat.completions.create({ model: 'service-chat', messages });
    assert.equal(completion.object, 'chat.completion');
    assert.match(completion.id, /^chatcmpl-\d+/);
    assert.equal(completion.choices[0].message.role, 'assistant');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    const text = completion.choices[0].message.content ?? '';
    assert.match(text, /Mock answer to "Name a prime number"/);
    assert.match(text, /System prompt "You are concise\."/);
    assert.ok(completion.usage!.total_tokens > 0);
    assert.equal(completion.usage!.total_tokens, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);

    const stream = await client().chat.completions.create({ model: 'service-chat', messages, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    assert.equal(content, text);
    const withDelta = chunks.filter((chunk) => Object.keys(chunk.choices[0]?.delta ?? {}).length > 0);
    assert.equal(chunks[0], withDelta[0], 'the first chunk carries a delta');
    assert.deepEqual(withDelta[0].choices[0].delta, { role: 'assistant', content: '' }, 'the role, with empty content as OpenAI sends it');
    assert.ok(withDelta.slice(1).every((chunk) => chunk.choices[0].delta.role === undefined), 'the role is sent once');
    const last = chunks.at(-1)!;
    assert.equal(last.choices[0].finish_reason, 'stop');
    assert.deepEqual(last.choices[0].delta, {});
    assert.ok(last.usage && last.usage.total_tokens > 0);
    assert.ok(chunks.some((chunk) => (chunk as any).service_events?.some((event: any) => event.type === 'AGENT_STARTED')), 'service events ride along');
  });

  it('shows the answer\'s first words as their write is queued, once, while native streams wait for the log', async () => {
    // Every write of token text waits in its transaction until released.
    const hold = await holdInserts(gateway().databaseUrl, 'task_events', { when: `new.type = 'LLM_PARTIAL'`, lockKey: 4245 });
    try {
      // Without the early words the stream would wait for the held write for good: the test gives up instead.
      const { data: stream, response } = await client().chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'first words early' }], stream: true },
        { signal: AbortSignal.timeout(15_000) }).withResponse();
      const taskId = response.headers.get('x-workflow-id')!;
      const chunks = stream[Symbol.asyncIterator]();
      const contents: string[] = [];
      while (contents.length === 0) {
        const next = await chunks.next();
        assert.equal(next.done, false, 'the stream gives its first words while their write is held');
        const content = next.value.choices[0]?.delta?.content;
        if (content) contents.push(content);
      }
      await waitFor('the write of the first words to be held', async () => (await hold.waiting()) || undefined);
      const { rows: [stored] } = await gateway().sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId]);
      assert.equal(stored.count, 0, 'shown before they were stored');
      const native = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}`, { timeoutMs: 500 });
      assert.ok(native.messages.some((message) => message.event === 'AGENT_STARTED'), 'a native stream has the stored events');
      assert.ok(!native.messages.some((message) => message.event === 'thread.message.delta'), 'and no token text before it is stored: it can resume by id');

      await hold.release();
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) contents.push(next.value.choices[0]?.delta?.content ?? '');
      const task = await waitForTask(gateway(), taskId);
      assert.equal(contents.join(''), task.result, 'the first words once, then the rest: the stored answer');
    } finally {
      await hold.release();
    }
  });

  it('a three-message conversation keeps its context through the derived session; another user gets another session', async () => {
    const system = { role: 'system' as const, content: 'Remember things.' };
    const first = await client().chat.completions.create({ model: 'service-chat', messages: [system, { role: 'user', content: 'My cat is Tom' }], user: 'u-1' }).withResponse();
    const sessionId = first.response.headers.get('x-session-id');
    assert.ok(sessionId, 'a new session is announced');
    assert.ok(first.response.headers.get('x-service-session-id'));
    const reply = first.data.choices[0].message.content!;
    const second = await client().chat.completions.create({
      model: 'service-chat', user: 'u-1',
      messages: [system, { role: 'user', content: 'My cat is Tom' }, { role: 'assistant', content: reply }, { role: 'user', content: 'What is my cat called?' }],
    }).withResponse();
    assert.match(second.data.choices[0].message.content!, /after 2 earlier messages/, 'the history reached the model');
    assert.equal(second.response.headers.get('x-session-id'), null, 'same session, nothing to announce');
    const { rows } = await gateway().sql.query(`select count(*)::int as count from tasks t where t.session_id::text = $1`, [sessionId]);
    assert.equal(rows[0].count, 2, 'both turns landed in one session');
    const other = await client().chat.completions.create({ model: 'service-chat', messages: [system, { role: 'user', content: 'My cat is Tom' }], user: 'u-2' }).withResponse();
    assert.notEqual(other.response.headers.get('x-session-id'), sessionId);
    const explicit = await client().chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'X-Session-ID': 'my-chat-1' } }).withResponse();
    assert.equal(explicit.response.headers.get('x-session-id'), 'my-chat-1');
  });

  it('the raw stream\'s first chunk has the role, and service events come only after it', async () => {
    const answer = await gateway().request('POST', '/v1/chat/completions', { model: 'service-chat', stream: true, messages: [{ role: 'user', content: 'raw stream please' }] });
    assert.equal(answer.status, 200);
    const frames = parseSseText(answer.text).map((message) => message.data);
    assert.equal(frames.at(-1), '[DONE]');
    const chunks = frames.slice(0, -1).map((data) => JSON.parse(data));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(chunks[0].service_events, undefined, 'the role chunk carries no events');
    assert.ok(chunks.slice(1).some((chunk) => chunk.service_events), 'service events follow it');
    assert.ok(chunks.slice(1).every((chunk) => chunk.choices[0].delta.role === undefined), 'the role is sent once');
    const text = chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('');
    assert.match(text, /Mock answer to "raw stream please"/);
  });

  it('conversations sharing an opening never fail, and each continuation lands in its own session', async () => {
    const system = { role: 'system' as const, content: 'You are a friendly bot.' };
    const hi = { role: 'user' as const, content: 'Hi' };
    const ask = async (messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>, options: { max_tokens?: number; stream?: boolean } = {}) => {
      const { data, response } = await client().chat.completions.create({ model: 'service-chat', user: 'popular', messages, ...options, stream: false }).withResponse();
      return { answer: data.choices[0].message.content!, announced: response.headers.get('x-session-id') };
    };
    const sessionOf = async (query: string) => (await gateway().sql.query(`select session_id from tasks where query = $1`, [query])).rows.map((row) => row.session_id);
    const conversations = [];
    for (let index = 0; index < 25; index += 1) {
      const opening = await ask([system, hi]);
      assert.ok(opening.announced, 'a new conversation gets a new session');
      conversations.push({ opening, history: [system, hi, { role: 'assistant' as const, content: opening.answer }] });
    }
    const openingSessions = new Set(conversations.map((conversation) => conversation.opening.announced));
    assert.equal(openingSessions.size, 25, 'the same opening is not the same conversation');
    // The mock answers "Hi" identically every time: which opening a second turn continues is undecidable.
    for (const [index, conversation] of conversations.entries()) {
      const second = await ask([...conversation.history, { role: 'user', content: `second question ${index}` }]);
      conversation.history.push({ role: 'user', content: `second question ${index}` }, { role: 'assistant', content: second.answer });
    }
    for (const [index, conversation] of conversations.entries()) {
      const third = await ask([...conversation.history, { role: 'user', content: `third question ${index}` }]);
      assert.equal(third.announced, null, 'a decidable continuation stays in its session');
      assert.deepEqual(await sessionOf(`third question ${index}`), await sessionOf(`second question ${index}`));
    }
    const thirdSessions = new Set((await gateway().sql.query(`select session_id from tasks where query like 'third question %'`)).rows.map((row) => row.session_id));
    assert.equal(thirdSessions.size, 25, 'no two conversations share a session');

    // An opening whose answer differs (cut short by max_tokens) is decidable from the second turn on.
    const unique = await ask([system, hi], { max_tokens: 3 });
    const next = await ask([system, hi, { role: 'assistant', content: unique.answer }, { role: 'user', content: 'after the short answer' }]);
    assert.equal(next.announced, null);
    assert.deepEqual((await sessionOf('after the short answer')).map(String), [unique.announced]);
  });

  it('a streamed answer is remembered like a non-streamed one: the next turn continues the session', async () => {
    const opening = [{ role: 'user' as const, content: 'Stream me a greeting' }];
    const stream = await client().chat.completions.create({ model: 'service-chat', messages: opening, user: 'streamer', stream: true }).withResponse();
    const sessionId = stream.response.headers.get('x-session-id');
    let answer = '';
    for await (const chunk of stream.data) answer += chunk.choices[0]?.delta?.content ?? '';
    const next = await client().chat.completions.create({
      model: 'service-chat', user: 'streamer', messages: [...opening, { role: 'assistant', content: answer }, { role: 'user', content: 'and once more' }],
    }).withResponse();
    assert.equal(next.response.headers.get('x-session-id'), null);
    const { rows } = await gateway().sql.query(`select session_id::text from tasks where query = 'and once more'`);
    assert.equal(rows[0].session_id, sessionId);
  });

  for (const [model, mode] of [['service-standard', 'standard'], ['service-complex', 'supervisor']] as const) {
    it(`${model} runs the ${mode} workflow and streams its synthesis as real deltas`, async () => {
      const messages = [{ role: 'user' as const, content: `Name a prime number. Name a colour for ${model}.` }];
      const stream = await client().chat.completions.create({ model, messages, stream: true });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
      assert.match(content, /^Synthesis of 2 results/);
      const { rows: partials } = await gateway().sql.query(`select e.agent_id from task_events e join tasks t on t.id = e.task_id
        where t.query = $1 and e.type = 'LLM_PARTIAL' and (e.payload->>'final_answer')::boolean`, [messages[0].content]);
      assert.ok(partials.length > 0 && partials.every((partial) => partial.agent_id === 'synthesis'), 'the deltas streamed are the synthesis agent\'s');
      const { rows } = await gateway().sql.query(`select mode, result from tasks where query = $1`, [messages[0].content]);
      assert.equal(rows[0].mode, mode);
      assert.equal(rows[0].result, content, 'the stream carries the final answer and nothing else');
    });
  }

  it('lists the models whose workflows this deployment runs, with descriptions', async () => {
    const models = await client().models.list();
    const ids = models.data.map((model) => model.id);
    assert.ok(ids.includes('service-chat'));
    assert.ok(ids.includes('service-standard') && ids.includes('service-complex'), 'the DAG and supervisor workflows run here');
    assert.ok(!ids.includes('service-ads-research'), 'the ads model needs its deployment flag');
    const detail = await gateway().request('GET', '/v1/models/service-chat');
    assert.equal(detail.status, 200);
    assert.equal(detail.body.object, 'model');
    assert.ok(detail.headers.get('x-model-description'));
    const missing = await gateway().request('GET', '/v1/models/gpt-4');
    assert.equal(missing.status, 404);
    assert.deepEqual([missing.body.error.type, missing.body.error.code], ['invalid_request_error', 'model_not_found']);
  });

  for (const [name, body, pattern] of [
    ['missing messages', { model: 'service-chat' }, /messages/],
    ['an unknown role', { messages: [{ role: 'function', content: 'x' }] }, /role/],
    ['n other than 1', { messages: [{ role: 'user', content: 'x' }], n: 2 }, /n must be 1/],
    ['temperature above 2', { messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }, /temperature/],
    ['a penalty below -2', { messages: [{ role: 'user', content: 'x' }], presence_penalty: -3 }, /presence_penalty/],
    ['no user message', { messages: [{ role: 'system', content: 'x' }] }, /user message/],
    ['non-text content', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, /content/],
  ] as const) {
    it(`answers 400 in the OpenAI envelope for ${name}`, async () => {
      const answer = await gateway().request('POST', '/v1/chat/completions', body);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual([answer.body.error.type, answer.body.error.code], ['invalid_request_error', 'invalid_request']);
      assert.match(answer.body.error.message, pattern);
    });
  }

  it('caps max_tokens at 16384', async () => {
    const answer = await gateway().request('POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'cap' }], max_tokens: 100_000 });
    assert.equal(answer.status, 200, answer.text);
    const { rows } = await gateway().sql.query(`select context->>'max_output_tokens' as cap from tasks where query = 'cap'`);
    assert.equal(rows[0].cap, '16384');
  });

  it('an address the layer does not serve (embeddings, files) is a 404 in the OpenAI envelope, with its message', async () => {
    await assert.rejects(client().embeddings.create({ model: 'text-embedding-3-small', input: 'hi' }), (error: any) =>
      error.status === 404 && /Invalid URL \(POST \/v1\/embeddings\): the OpenAI-compatible API here serves/.test(error.message) && error.code === 'unknown_url');
    const listed = await gateway().request('GET', '/v1/files?purpose=x');
    assert.deepEqual([listed.status, listed.body.error.type, listed.body.error.code], [404, 'invalid_request_error', 'unknown_url']);
    assert.match(listed.body.error.message, /^Invalid URL \(GET \/v1\/files\)/);
    const preflight = await fetch(`${gateway().url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 204, 'a browser\'s preflight of a served route still passes');
    const outside = await gateway().request('GET', '/api/v1/nowhere');
    assert.deepEqual(outside.body, { error: 'Route GET /api/v1/nowhere not found' }, 'outside /v1, the spec\'s shape as before');
  });
});

describe('OpenAI streaming of a slow answer', () => {
  const gateway = useGateway({ env: { MOCK_DELAY_MS: '1000' } });

  it('content chunks arrive while the model is still answering', async () => {
    const client = new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'stream slowly please' }], stream: true });
    const arrivals: number[] = [];
    let text = '';
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta?.content;
      if (content) {
        arrivals.push(Date.now());
        text += content;
      }
    }
    assert.ok(arrivals.length >= 5, `${arrivals.length} content chunks`);
    assert.ok(arrivals.at(-1)! - arrivals[0] >= 500, 'spread over the time the model took');
    assert.match(text, /Mock answer to "stream slowly please"/);
  });
});

describe('OpenAI layer limits and auth errors', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', OPENAI_TOKENS_PER_MINUTE: '50', MAX_STREAMS_PER_KEY: '2' } });

  it('authentication failures use the OpenAI envelope', async () => {
    const answer = await gateway().request('POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }, { authorization: 'Bearer sk_live_wrongwrongwrongwrongwrong' });
    assert.equal(answer.status, 401);
    assert.deepEqual(answer.body.error, { message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key' });
  });

  it('the tokens-per-minute limit answers 429 with Retry-After and the rate headers', async () => {
    const account = await registerAccount(gateway(), 'openai');
    const client = new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: account.apiKey, maxRetries: 0 });
    const first = await client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'spend some tokens please' }] }).withResponse();
    assert.ok(first.data.usage!.total_tokens >= 50, 'the first call uses the minute\'s tokens');
    assert.equal(first.response.headers.get('x-ratelimit-limit-requests'), '60');
    assert.equal(first.response.headers.get('x-ratelimit-limit-tokens'), '50');
    const refused = await gateway().request('POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'again' }] }, { 'x-api-key': account.apiKey });
    assert.equal(refused.status, 429);
    assert.deepEqual([refused.body.error.type, refused.body.error.code], ['rate_limit_error', 'rate_limit_exceeded']);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('x-ratelimit-remaining-tokens'), '0');
  });

  it('streamed completions refused by the limits hold no stream slot: the key still opens its two streams', async () => {
    const account = await registerAccount(gateway(), 'openai-slots');
    const key = { 'x-api-key': account.apiKey };
    const spent = await gateway().request('POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'spend some tokens please' }] }, key);
    assert.equal(spent.status, 200, spent.text);
    // The slot is taken beside the limits' check; each of these is refused by the limits, more than the key's two slots.
    const refused = await Promise.all(Array.from({ length: 6 }, () =>
      gateway().request('POST', '/v1/chat/completions', { stream: true, messages: [{ role: 'user', content: 'again' }] }, key)));
    assert.deepEqual(refused.map((answer) => [answer.status, answer.body?.error?.code]), Array(6).fill([429, 'rate_limit_exceeded']));
    await waitFor('the refused requests\' slots freed', async () =>
      (await gateway().sql.query('select count(*)::int as count from stream_leases')).rows[0].count === 0 || undefined);
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'long', context: { mock_delay_ms: 10_000 } }, key);
    const controllers = [new AbortController(), new AbortController()];
    try {
      const opened = await Promise.all(controllers.map((controller) =>
        fetch(`${gateway().url}/api/v1/stream/sse?workflow_id=${task.body.task_id}`, { headers: key, signal: controller.signal })));
      assert.deepEqual(opened.map((response) => response.status), [200, 200]);
    } finally {
      for (const controller of controllers) controller.abort();
      await gateway().request('POST', `/api/v1/tasks/${task.body.task_id}/cancel`, undefined, key);
    }
  });
});
