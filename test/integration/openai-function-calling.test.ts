import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { assertImagesFetchedByAddress, ONE_PIXEL_PNG } from '../fixtures/image-site.ts';
import { useGateway } from '../helpers/gateway.ts';

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'], additionalProperties: false },
  },
};
const timeTool: ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_time', description: 'The local time of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** The tool calls of a stream, put together as the openai client's helpers do: by index, arguments appended. */
function assembleToolCalls(chunks: ChatCompletionChunk[]) {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const delta of chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? [])) {
    calls[delta.index] ??= { id: '', name: '', arguments: '' };
    if (delta.id) calls[delta.index].id = delta.id;
    if (delta.function?.name) calls[delta.index].name = delta.function.name;
    calls[delta.index].arguments += delta.function?.arguments ?? '';
  }
  return calls;
}

describe('function calling, structured output and roles with the official openai client', () => {
  // The image server below is on 127.0.0.1, which the network guard opens only when told to.
  const gateway = useGateway({ env: { TOOLS_NETWORK_ALLOW: '127.0.0.1' } });
  const client = () => new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development', maxRetries: 0 });

  it('a two-turn exchange: the tool call goes out, the result comes back, the final answer uses it; one session', async () => {
    const question: ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Oslo right now?' };
    const first = await client().chat.completions.create({ model: 'service-chat', messages: [question], tools: [timeTool, weatherTool] }).withResponse();
    const choice = first.data.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const [call] = choice.message.tool_calls ?? [];
    assert.ok(call && call.type === 'function');
    assert.equal(call.function.name, 'get_weather', 'the tool the question is about');
    const args = JSON.parse(call.function.arguments);
    assert.equal(args.city, 'Oslo');
    assert.equal(args.unit, 'celsius', 'a required enum argument gets one of its values');
    const sessionId = first.response.headers.get('x-session-id');
    assert.ok(sessionId);

    const second = await client().chat.completions.create({
      model: 'service-chat', tools: [timeTool, weatherTool],
      messages: [question, choice.message, { role: 'tool', tool_call_id: call.id, content: '4 degrees and sleet' }],
    }).withResponse();
    assert.equal(second.data.choices[0].finish_reason, 'stop');
    assert.match(second.data.choices[0].message.content ?? '', /get_weather: 4 degrees and sleet/, 'the answer uses the tool result');
    assert.equal(second.response.headers.get('x-session-id'), null, 'the same session continues: nothing new to announce');
    const { rows } = await gateway().sql.query(`select count(*)::int as count from tasks where session_id::text = (select id::text from sessions where external_id = $1 or id::text = $1 limit 1)`, [sessionId]);
    assert.equal(rows[0].count, 2, 'both turns in one session');
  });

  it('the same exchange streamed: delta.tool_calls with index, id, type, name, then the arguments in pieces', async () => {
    const question: ChatCompletionMessageParam = { role: 'user', content: 'Fetch https://example.org/report.html for me' };
    const fetchTool: ChatCompletionTool = { type: 'function', function: { name: 'fetch_page', description: 'Downloads a web page', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } } };
    const stream = await client().chat.completions.create({ model: 'service-chat', messages: [question], tools: [weatherTool, fetchTool], stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks[0].choices[0].delta.role, 'assistant', 'the role comes first');
    const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    assert.ok(toolDeltas.length >= 2, 'the call, then its arguments in one or more pieces');
    assert.equal(toolDeltas[0].index, 0);
    assert.equal(toolDeltas[0].type, 'function');
    assert.ok(toolDeltas[0].id);
    assert.equal(toolDeltas[0].function?.name, 'fetch_page');
    assert.ok(toolDeltas.slice(1).every((delta) => delta.id === undefined && delta.function?.name === undefined));
    const [call] = assembleToolCalls(chunks);
    assert.deepEqual(JSON.parse(call.arguments), { url: 'https://example.org/report.html' });
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');

    const answer = await client().chat.completions.create({
      model: 'service-chat', tools: [weatherTool, fetchTool], stream: true,
      messages: [question, { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
        { role: 'tool', tool_call_id: call.id, content: 'Revenue grew 12%.' }],
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of answer) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'stop');
    assert.match(text, /fetch_page: Revenue grew 12%/);
  });

  it('tool_choice: required forces a call, a named function forces that one, none forbids one', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello to everyone' }];
    const auto = await client().chat.completions.create({ model: 'service-chat', messages, tools: [weatherTool] });
    assert.equal(auto.choices[0].finish_reason, 'stop', 'nothing in the request fits the tool: the model answers');
    const required = await client().chat.completions.create({ model: 'service-chat', messages, tools: [weatherTool], tool_choice: 'required' });
    assert.equal(required.choices[0].finish_reason, 'tool_calls');
    assert.equal(required.choices[0].message.tool_calls?.[0].type === 'function' && required.choices[0].message.tool_calls[0].function.name, 'get_weather');
    const named = await client().chat.completions.create({
      model: 'service-chat', messages: [{ role: 'user', content: 'What is the weather in Lisbon?' }], tools: [weatherTool, timeTool], tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const namedCall = named.choices[0].message.tool_calls?.[0];
    assert.ok(namedCall?.type === 'function');
    assert.equal(namedCall.function.name, 'get_time');
    assert.deepEqual(JSON.parse(namedCall.function.arguments), { city: 'Lisbon' });
    const none = await client().chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'What is the weather in Lisbon?' }], tools: [weatherTool], tool_choice: 'none' });
    assert.equal(none.choices[0].finish_reason, 'stop');
    assert.equal(none.choices[0].message.tool_calls, undefined);
  });

  it('response_format json_schema returns JSON that validates; json_object returns an object', async () => {
    // With an $id, as some schema generators write one: every request after the first with it was refused.
    const schema = {
      $id: 'https://example.org/itinerary.json',
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'array', items: { type: 'object', properties: { day: { type: 'integer', minimum: 1 }, plan: { type: 'string' } }, required: ['day', 'plan'], additionalProperties: false } }, budget: { type: ['number', 'null'] } },
      required: ['city', 'days', 'budget'],
      additionalProperties: false,
    };
    const completion = await client().chat.completions.create({
      model: 'service-chat', messages: [{ role: 'user', content: 'Plan two days in Porto' }],
      response_format: { type: 'json_schema', json_schema: { name: 'itinerary', schema, strict: true } },
    });
    const value = JSON.parse(completion.choices[0].message.content ?? '');
    assert.ok(new Ajv().validate(schema, value), 'the answer validates against the schema');
    const stream = await client().chat.completions.create({
      model: 'service-chat', stream: true, messages: [{ role: 'user', content: 'Plan two days in Porto' }],
      response_format: { type: 'json_schema', json_schema: { name: 'itinerary', schema, strict: true } },
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
    assert.ok(new Ajv().validate(schema, JSON.parse(streamed)), 'streamed too');
    const object = await client().chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'Give me JSON' }], response_format: { type: 'json_object' } });
    const parsed = JSON.parse(object.choices[0].message.content ?? '');
    assert.equal(typeof parsed, 'object');
    assert.ok(!Array.isArray(parsed));
  });

  it('the model descriptions say which models take client tools', async () => {
    const chat = await client().models.retrieve('service-chat').withResponse();
    assert.match(chat.response.headers.get('x-model-description') ?? '', /client tools .*never the gateway's/);
    const standard = await client().models.retrieve('service-standard').withResponse();
    assert.match(standard.response.headers.get('x-model-description') ?? '', /client tools, response_format and images are refused \(use service-chat\)/);
  });

  it('the developer role is the system prompt', async () => {
    const completion = await client().chat.completions.create({
      model: 'service-chat', messages: [{ role: 'developer', content: 'Answer like a pirate.' }, { role: 'user', content: 'Hello there' }],
    });
    assert.match(completion.choices[0].message.content ?? '', /System prompt "Answer like a pirate\."/);
  });

  it('an image as a data URL, or fetched through the network guard, reaches a vision model (the mock describes what it saw)', async () => {
    const png = ONE_PIXEL_PNG;
    const completion = await client().chat.completions.create({
      model: 'service-chat',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
    });
    assert.match(completion.choices[0].message.content ?? '', /Image 1: image\/png, 1x1 pixels/);
    const imageAlone = await client().chat.completions.create({
      model: 'service-chat', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
    });
    assert.match(imageAlone.choices[0].message.content ?? '', /Image 1: image\/png, 1x1 pixels/, 'an image alone is a question too (it was "query is required")');

    await assertImagesFetchedByAddress(async (url) => (await client().chat.completions.create({
      model: 'service-chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }],
    })).choices[0].message.content ?? '');
  });

  it('refuses what it cannot honour, by name', async () => {
    const refusal = async (body: Record<string, unknown>) => {
      const response = await gateway().request('POST', '/v1/chat/completions', { model: 'service-chat', messages: [{ role: 'user', content: 'hi' }], ...body });
      assert.equal(response.status, 400, response.text);
      return response.body.error.message as string;
    };
    assert.match(await refusal({ tool_choice: 'required' }), /tool_choice requires tools/);
    assert.match(await refusal({ tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } }), /nope is not one of the tools/);
    assert.match(await refusal({ tools: [weatherTool, weatherTool] }), /get_weather is declared twice/);
    assert.match(await refusal({ tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'wrong' } } }] }), /tools\.0\.parameters/);
    assert.match(await refusal({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 12 } } } }), /response_format\.json_schema\.schema/);
    assert.match(await refusal({ model: 'service-standard', tools: [weatherTool] }), /^tools: the service-standard model/);
    assert.match(await refusal({ messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_9', content: 'x' }] }), /messages\.1\.tool_call_id call_9 answers no tool call/);
    assert.match(await refusal({ messages: [{ role: 'tool', content: 'x' }, { role: 'user', content: 'hi' }] }), /messages\.0\.tool_call_id is required/);
  });
});
