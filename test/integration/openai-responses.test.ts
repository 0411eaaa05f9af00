import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { assertImagesFetchedByAddress, ONE_PIXEL_PNG } from '../fixtures/image-site.ts';
import { start as startStandIn } from '../fixtures/openai-stand-in.ts';
import { registerAccount } from '../helpers/accounts.ts';
import { startGateway, useGateway, waitFor, type Gateway } from '../helpers/gateway.ts';

const clientOf = (gateway: Gateway, apiKey = 'not-needed-in-development') => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0 });

const taskIdOf = (responseId: string) => {
  const hex = responseId.replace(/^resp_/, '');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const deltasOf = (events: ResponseStreamEvent[]) => events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');

async function pollUntilEnded(client: OpenAI, responseId: string, timeoutMs = 60_000) {
  return waitFor(`response ${responseId} to end`, async () => {
    const response = await client.responses.retrieve(responseId);
    return response.status === 'queued' || response.status === 'in_progress' ? undefined : response;
  }, timeoutMs);
}

describe('Responses API with the official openai client', () => {
  // The image server of the input_image test is on 127.0.0.1, which the network guard opens only when told to.
  const gateway = useGateway({ env: { TOOLS_NETWORK_ALLOW: '127.0.0.1' } });
  const client = () => clientOf(gateway());

  it('creates a response from text and answers it with the response object', async () => {
    const response = await client().responses.create({ model: 'service-chat', input: 'hello responses' });
    assert.match(response.id, /^resp_[0-9a-f]{32}$/);
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.model, 'service-chat');
    assert.equal(typeof response.created_at, 'number');
    assert.match(response.output_text, /Mock answer to "hello responses" after 0 earlier messages/);
    const [message] = response.output;
    assert.equal(message.type, 'message');
    assert.deepEqual(message.type === 'message' && message.content.map((part) => part.type), ['output_text']);
    assert.ok(response.usage!.input_tokens > 0 && response.usage!.output_tokens > 0);
    assert.equal(response.usage!.total_tokens, response.usage!.input_tokens + response.usage!.output_tokens);
    assert.equal(response.error, null);
    const again = await client().responses.retrieve(response.id);
    assert.equal(again.output_text, response.output_text);
    assert.deepEqual(again.usage, response.usage);
  });

  it('input items: instructions and system/developer messages make the system prompt, earlier messages the history', async () => {
    const response = await client().responses.create({
      instructions: 'Answer like a pirate captain',
      input: [
        { role: 'developer', content: 'Keep it short' },
        { role: 'user', content: 'first question' },
        // An earlier output sent back as it came (the output message shape, id and status included).
        { type: 'message', id: 'msg_earlier', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'first answer here', annotations: [] }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'second question' }] },
      ],
    });
    assert.match(response.output_text, /System prompt "Answer like a pirate captain/);
    assert.match(response.output_text, /Mock answer to "second question" after 2 earlier messages; previous assistant turn: "first answer here"/);
    assert.equal(response.instructions, 'Answer like a pirate captain');
  });

  it('streams typed events numbered from 0 without a gap, the deltas making the final text', async () => {
    const stream = await client().responses.create({ input: 'stream this please', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
    const types = events.map((event) => event.type);
    assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    assert.ok(types.filter((type) => type === 'response.output_text.delta').length >= 2, 'the answer arrives in several deltas');
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    const text = deltasOf(events);
    assert.match(text, /Mock answer to "stream this please"/);
    assert.equal((completed.response.output[0] as { content: Array<{ text: string }> }).content[0].text, text);
    assert.equal((events.at(-4) as { text: string }).text, text);
    assert.equal(completed.response.status, 'completed');
    assert.ok(completed.response.usage!.total_tokens > 0);
  });

  it('the SDK stream helper builds the final response from the events', async () => {
    const stream = client().responses.stream({ input: 'helper stream' });
    let snapshot = '';
    stream.on('response.output_text.delta', (event) => { snapshot = event.snapshot; });
    const final = await stream.finalResponse();
    assert.match(final.output_text, /Mock answer to "helper stream"/);
    assert.equal(snapshot, final.output_text);
  });

  it('previous_response_id continues the conversation in the same session', async () => {
    const first = await client().responses.create({ input: 'my name is Ada' }).withResponse();
    const second = await client().responses.create({ input: 'what is my name?', previous_response_id: first.data.id }).withResponse();
    assert.equal(second.data.previous_response_id, first.data.id);
    assert.match(second.data.output_text, /Mock answer to "what is my name\?" after 2 earlier messages; previous assistant turn: "System prompt/);
    assert.equal(second.response.headers.get('x-service-session-id'), first.response.headers.get('x-service-session-id'));
    const third = await client().responses.create({ input: 'and again', previous_response_id: second.data.id });
    assert.match(third.output_text, /after 4 earlier messages/);
    // A branch from the first response does not see the second.
    const branch = await client().responses.create({ input: 'a branch', previous_response_id: first.data.id });
    assert.match(branch.output_text, /after 2 earlier messages/);
  });

  it('background: answers at once, then is polled to completion', async () => {
    const created = await client().responses.create({ input: 'work in the background', background: true });
    assert.equal(created.background, true);
    assert.ok(['queued', 'in_progress', 'completed'].includes(created.status!), created.status);
    const done = await pollUntilEnded(client(), created.id);
    assert.equal(done.status, 'completed');
    assert.match(done.output_text, /Mock answer to "work in the background"/);
  });

  it('input_items lists the response\'s own items, newest first, paged with after and limit', async () => {
    const response = await client().responses.create({
      input: [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }],
    });
    const all = await client().responses.inputItems.list(response.id);
    const texts = all.data.map((item) => (item as { content: Array<{ text: string }> }).content[0].text);
    assert.deepEqual(texts, ['three', 'two', 'one']);
    assert.equal((all.data[1] as { role: string }).role, 'assistant');
    const firstPage = await client().responses.inputItems.list(response.id, { order: 'asc', limit: 2 });
    assert.deepEqual(firstPage.data.map((item) => (item as { content: Array<{ text: string }> }).content[0].text), ['one', 'two']);
    assert.equal(firstPage.has_more, true);
    const rest = await client().responses.inputItems.list(response.id, { order: 'asc', limit: 2, after: firstPage.data[1].id });
    assert.deepEqual(rest.data.map((item) => (item as { content: Array<{ text: string }> }).content[0].text), ['three']);
    assert.equal(rest.has_more, false);
  });

  it('an input_image, as a data URL or fetched through the network guard, reaches the vision model, and stays in the chain', async () => {
    const png = ONE_PIXEL_PNG;
    const response = await client().responses.create({
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is in this picture?' }, { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'low' }] }],
    });
    assert.match(response.output_text, /Image 1: image\/png, 1x1 pixels/, 'the mock describes what it was shown');
    const [listed] = (await client().responses.inputItems.list(response.id)).data as Array<{ content: unknown[] }>;
    assert.deepEqual(listed.content, [{ type: 'input_text', text: 'What is in this picture?' }, { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'low', file_id: null }]);

    const next = await client().responses.create({ previous_response_id: response.id, input: 'And what colour is it?' });
    const { rows } = await gateway().sql.query(`select context->'openai_turn'->'messages' as messages from tasks where id = $1`, [taskIdOf(next.id)]);
    const earlierImages = rows[0].messages.flatMap((message: { content: unknown }) => (Array.isArray(message.content) ? message.content : [])).filter((part: { type: string }) => part.type === 'image');
    assert.equal(earlierImages.length, 1, 'the next turn of the chain still shows the model the image');

    await assertImagesFetchedByAddress(async (url) => (await client().responses.create({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: url, detail: 'auto' }] }] })).output_text);
  });

  it('cancel: a response that was not created in the background, or has completed, is a 400', async () => {
    const foreground = await client().responses.create({ input: 'not in the background' });
    await assert.rejects(client().responses.cancel(foreground.id), (error: InstanceType<typeof OpenAI.BadRequestError>) =>
      error.status === 400 && /background=true/.test(error.message));
    const background = await client().responses.create({ input: 'quick background', background: true });
    await pollUntilEnded(client(), background.id);
    await assert.rejects(client().responses.cancel(background.id), (error: InstanceType<typeof OpenAI.BadRequestError>) =>
      error.status === 400 && /Cannot cancel a completed response/.test(error.message));
  });

  it('store: false is answered but cannot be read back or continued; delete removes a stored one', async () => {
    const unstored = await client().responses.create({ input: 'forget me', store: false });
    assert.equal((unstored as unknown as { store: boolean }).store, false);
    assert.match(unstored.output_text, /forget me/);
    await assert.rejects(client().responses.retrieve(unstored.id), (error: InstanceType<typeof OpenAI.NotFoundError>) => error.status === 404);
    await assert.rejects(client().responses.create({ input: 'continue', previous_response_id: unstored.id }),
      (error: InstanceType<typeof OpenAI.BadRequestError>) => error.status === 400 && /previous_response_id/.test(error.message));
    const stored = await client().responses.create({ input: 'delete me' });
    const deleted = await gateway().request('DELETE', `/v1/responses/${stored.id}`);
    assert.deepEqual(deleted.body, { id: stored.id, object: 'response', deleted: true });
    await assert.rejects(client().responses.retrieve(stored.id), (error: InstanceType<typeof OpenAI.NotFoundError>) => error.status === 404);
  });

  it('a response whose event log is past its retention still streams: the answer whole, then completed', async () => {
    const response = await client().responses.create({ input: 'an old answer' });
    await gateway().sql.query('delete from task_events where task_id = $1', [taskIdOf(response.id)]);
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client().responses.retrieve(response.id, { stream: true })) events.push(event);
    assert.equal(events.at(-1)!.type, 'response.completed');
    assert.equal(deltasOf(events), response.output_text);
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
  });

  it('the routes are in /openapi.json with their request and response shapes', async () => {
    const { paths } = (await gateway().request('GET', '/openapi.json')).body;
    const create = paths['/v1/responses'].post;
    assert.ok(create.requestBody.content['application/json'].schema.properties.previous_response_id);
    assert.ok(create.responses['200'].content['application/json'].schema.properties.output);
    assert.ok(paths['/v1/responses/{responseId}'].get.parameters.some((parameter: { name: string }) => parameter.name === 'starting_after'));
    assert.ok(paths['/v1/responses/{responseId}'].delete);
    assert.ok(paths['/v1/responses/{responseId}/cancel'].post);
    assert.ok(paths['/v1/responses/{responseId}/input_items'].get.parameters.some((parameter: { name: string }) => parameter.name === 'after'));
  });

  it('an unknown or malformed response id is a 404 in the OpenAI envelope', async () => {
    for (const id of ['resp_00000000000000000000000000000000', 'not-a-response-id']) {
      const answer = await gateway().request('GET', `/v1/responses/${id}`);
      assert.equal(answer.status, 404);
      assert.equal(answer.body.error.message, `No response found with id '${id}'.`);
      assert.equal(answer.body.error.type, 'invalid_request_error');
    }
  });

  const BAD_REQUESTS: Array<{ body: Record<string, unknown>; names: RegExp }> = [
    { body: {}, names: /input is required/ },
    { body: { input: 'x', colour: 'blue' }, names: /unknown field in body: colour/ },
    { body: { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] }, names: /input\[0\]\.content\[0\]\.type: input_file is not supported \(input_text, output_text and input_image parts are\)/ },
    { body: { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, names: /input\[0\]\.content\[0\]\.file_id is not supported: there is no Files API here/ },
    { body: { input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] }, names: /input\[0\]\.content\[0\]\.image_url is required/ },
    { body: { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'ultra' }] }] }, names: /input\[0\]\.content\[0\]\.detail must be one of auto, low, high/ },
    { body: { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://example.org/a.png' }] }] }, names: /invalid input\[0\]\.content\[0\]\.image_url: a data: URL or an http\(s\) address is expected/ },
    { body: { input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] }, { role: 'user', content: 'hi' }] }, names: /input\[0\]\.content\[0\]: only user messages carry images/ },
    { body: { model: 'service-standard', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] }] }, names: /^input: the service-standard model .* cannot take client functions, function call items, images or a JSON format/ },
    { body: { input: [{ type: 'item_reference', id: 'msg_1' }] }, names: /input\[0\]\.type: item_reference items are not supported/ },
    { body: { input: [{ role: 'tool', content: 'x' }] }, names: /input\[0\]\.role must be one of/ },
    { body: { input: [{ role: 'user', content: 'x', name: 'bob' }] }, names: /unknown field in input\[0\]: name/ },
    { body: { input: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] }, names: /input must end with a user message/ },
    { body: { input: 'x', previous_response_id: 'resp_00000000000000000000000000000000' }, names: /previous_response_id: previous response with id/ },
    { body: { input: 'x', model: 'gpt-5' }, names: /The model 'gpt-5' does not exist/ },
    { body: { input: 'x', max_output_tokens: 4 }, names: /invalid max_output_tokens/ },
    { body: { input: 'x', background: true, store: false }, names: /background requires store/ },
  ];
  for (const { body, names } of BAD_REQUESTS) test(`refuses ${JSON.stringify(body)} naming what is wrong`, async () => {
    const answer = await gateway().request('POST', '/v1/responses', body);
    assert.ok(answer.status === 400 || answer.status === 404, answer.text);
    assert.match(answer.body.error.message, names);
  });
});

describe('Responses API tenancy', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' } });

  it('another tenant\'s response does not exist for the caller: 404 on every route and as previous_response_id', async () => {
    const owner = await registerAccount(gateway(), 'owner');
    const stranger = await registerAccount(gateway(), 'stranger');
    const response = await clientOf(gateway(), owner.apiKey).responses.create({ input: 'mine only', background: true });
    const foreign = clientOf(gateway(), stranger.apiKey);
    const isNotFound = (error: { status?: number }) => error.status === 404;
    await assert.rejects(foreign.responses.retrieve(response.id), isNotFound);
    await assert.rejects(foreign.responses.cancel(response.id), isNotFound);
    await assert.rejects(foreign.responses.inputItems.list(response.id), isNotFound);
    await assert.rejects(foreign.responses.delete(response.id), isNotFound);
    await assert.rejects(foreign.responses.retrieve(response.id, { stream: true }), isNotFound);
    await assert.rejects(foreign.responses.create({ input: 'steal', previous_response_id: response.id }),
      (error: { status?: number; message: string }) => error.status === 400 && /not found/.test(error.message));
    const own = await pollUntilEnded(clientOf(gateway(), owner.apiKey), response.id);
    assert.equal(own.status, 'completed');
  });

  it('without a credential the routes answer 401 in the OpenAI envelope', async () => {
    const answer = await gateway().request('POST', '/v1/responses', { input: 'x' });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.type, 'authentication_error');
  });
});

describe('Responses API: cancel and streams across processes', () => {
  // The mock takes 4 s per answer, spread over its words, so a response is caught mid-answer.
  const gateway = useGateway({ env: { MOCK_DELAY_MS: '4000' } });

  it('cancel stops a background response in flight; its stream ends with the cancelled response', async () => {
    const client = clientOf(gateway());
    const created = await client.responses.create({ input: 'cancel me while I think', background: true });
    await waitFor('the answer to be streaming', async () => {
      const { rows } = await gateway().sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskIdOf(created.id)]);
      return rows[0].count >= 1 ? true : undefined;
    });
    const cancelled = await client.responses.cancel(created.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await client.responses.retrieve(created.id)).status, 'cancelled');
    // Cancelling again answers the cancelled response again.
    assert.equal((await client.responses.cancel(created.id)).status, 'cancelled');
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.retrieve(created.id, { stream: true })) events.push(event);
    const last = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.failed' }>;
    assert.equal(last.type, 'response.failed');
    assert.equal(last.response.status, 'cancelled');
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
  });

  test('a stream cut in one process resumes with starting_after in another, gap-free', async (t) => {
    const other = await startGateway(t, { databaseUrl: gateway().databaseUrl, env: { MOCK_DELAY_MS: '4000', EXECUTOR_ID: 'responses-b' } });
    const first: ResponseStreamEvent[] = [];
    const stream = await clientOf(gateway()).responses.create({ input: 'resume me somewhere else please', background: true, stream: true });
    for await (const event of stream) {
      first.push(event);
      if (first.filter((seen) => seen.type === 'response.output_text.delta').length === 3) break;
    }
    const cut = first.at(-1)!.sequence_number;
    const rest: ResponseStreamEvent[] = [];
    const responseId = (first[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response.id;
    for await (const event of await clientOf(other).responses.retrieve(responseId, { stream: true, starting_after: cut })) rest.push(event);
    assert.deepEqual([...first, ...rest].map((event) => event.sequence_number), [...first, ...rest].map((_, index) => index), 'no event missing or repeated');
    const completed = rest.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    assert.equal(completed.type, 'response.completed');
    const text = deltasOf([...first, ...rest]);
    assert.match(text, /Mock answer to "resume me somewhere else please"/);
    assert.equal((completed.response.output[0] as { content: Array<{ text: string }> }).content[0].text, text);
    // A full replay from either process numbers the events the same way.
    const replay: ResponseStreamEvent[] = [];
    for await (const event of await clientOf(gateway()).responses.retrieve(responseId, { stream: true })) replay.push(event);
    assert.deepEqual(replay.map((event) => [event.sequence_number, event.type]), [...first, ...rest].map((event) => [event.sequence_number, event.type]));
  });
});

test('a background response survives kill -9 of the process that started it and completes once', async (t) => {
  const gateway = await startGateway(t, { env: { MOCK_DELAY_MS: '4000' } });
  const client = clientOf(gateway);
  const created = await client.responses.create({ input: 'survive the crash please', background: true });
  const taskId = taskIdOf(created.id);
  await waitFor('the answer to be streaming', async () => {
    const { rows } = await gateway.sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId]);
    return rows[0].count >= 2 ? true : undefined;
  });
  await gateway.kill('SIGKILL');
  await gateway.restart();
  const done = await pollUntilEnded(client, created.id);
  assert.equal(done.status, 'completed');
  assert.match(done.output_text, /Mock answer to "survive the crash please"/);
  const { rows: [counts] } = await gateway.sql.query(`
    select (select count(*)::int from task_events where task_id = $1 and type = 'WORKFLOW_COMPLETED') as completions,
           (select count(*)::int from task_events where task_id = $1 and type = 'LLM_OUTPUT' and agent_id = 'final_output') as final_outputs,
           (select count(*)::int from usage_records where task_id = $1) as usage_rows,
           (select recovery_attempts::int from dbos.workflow_status where workflow_uuid = $2) as starts`, [taskId, taskId]);
  assert.deepEqual(counts, { completions: 1, final_outputs: 1, usage_rows: 1, starts: 2 });
  // Its stream, read after the crash, carries the answer exactly once.
  const events: ResponseStreamEvent[] = [];
  for await (const event of await client.responses.retrieve(created.id, { stream: true })) events.push(event);
  assert.equal(deltasOf(events), done.output_text);
  assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
});

test('kill -9 mid-stream: another process takes the response over, and the stream resumed there with starting_after completes it once, gap-free', async (t) => {
  const env = { MOCK_DELAY_MS: '4000', EXECUTOR_DEAD_AFTER_SECONDS: '4' };
  const processA = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'responses-a' } });
  const processB = await startGateway(t, { databaseUrl: processA.databaseUrl, env: { ...env, EXECUTOR_ID: 'responses-b' } });
  const first: ResponseStreamEvent[] = [];
  const stream = await clientOf(processA).responses.create({ input: 'outlive the process that started me', background: true, stream: true });
  for await (const event of stream) {
    first.push(event);
    if (first.filter((seen) => seen.type === 'response.output_text.delta').length === 2) break;
  }
  const responseId = (first[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>).response.id;
  const { rows: [{ executor }] } = await processA.sql.query(`select executor_id as executor from dbos.workflow_status where workflow_uuid = $1`, [taskIdOf(responseId)]);
  assert.equal(executor, 'responses-a', 'the process that was asked runs the response');
  await processA.kill('SIGKILL');

  const rest: ResponseStreamEvent[] = [];
  for await (const event of await clientOf(processB).responses.retrieve(responseId, { stream: true, starting_after: first.at(-1)!.sequence_number })) rest.push(event);
  const all = [...first, ...rest];
  assert.deepEqual(all.map((event) => event.sequence_number), all.map((_, index) => index), 'no event missing or repeated');
  const completed = rest.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
  assert.equal(completed.type, 'response.completed');
  const text = deltasOf(all);
  assert.match(text, /Mock answer to "outlive the process that started me"/);
  assert.equal((completed.response.output[0] as { content: Array<{ text: string }> }).content[0].text, text);
  const { rows: [counts] } = await processB.sql.query(`
    select (select count(*)::int from task_events where task_id = $1 and type = 'WORKFLOW_COMPLETED') as completions,
           (select count(*)::int from task_events where task_id = $1 and type = 'LLM_OUTPUT' and agent_id = 'final_output') as final_outputs,
           (select executor_id from dbos.workflow_status where workflow_uuid = $2) as executor`, [taskIdOf(responseId), taskIdOf(responseId)]);
  assert.deepEqual(counts, { completions: 1, final_outputs: 1, executor: 'responses-b' });
});

test('a response whose model call fails is failed, with the reason, whether waited for or streamed', async (t) => {
  const failing = await startStandIn({ failWithStatus: 500, failMessage: 'the stand-in is down' });
  t.after(() => failing.close());
  const gateway = await startGateway(t, { env: { OPENAI_COMPATIBLE_BASE_URL: `${failing.url}/v1` } });
  const client = clientOf(gateway);
  const waited = await client.responses.create({ input: 'this will fail' });
  assert.equal(waited.status, 'failed');
  assert.equal(waited.error!.code, 'server_error');
  assert.match(waited.error!.message, /the stand-in is down|model call failed/);
  assert.deepEqual(waited.output, []);
  const events: ResponseStreamEvent[] = [];
  for await (const event of await client.responses.create({ input: 'this fails too', stream: true })) events.push(event);
  const last = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.failed' }>;
  assert.equal(last.type, 'response.failed');
  assert.equal(last.response.status, 'failed');
  assert.ok(last.response.error);
});

test('a retry with the same Idempotency-Key names the same response', async (t) => {
  const gateway = await startGateway(t);
  const body = { input: 'only once please', background: true };
  const first = await gateway.request('POST', '/v1/responses', body, { 'idempotency-key': 'responses-retry-1' });
  const second = await gateway.request('POST', '/v1/responses', body, { 'idempotency-key': 'responses-retry-1' });
  assert.equal(first.status, 200, first.text);
  assert.equal(second.body.id, first.body.id);
  const { rows } = await gateway.sql.query(`select count(*)::int as count from openai_responses`);
  assert.equal(rows[0].count, 1);
});
