import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { startGateway, type Gateway } from '../helpers/gateway.ts';

/**
 * Every field of the current OpenAI chat-completions request is honoured or refused by name (issue 31, scope 3). An
 * honoured field is asserted by its effect on what a stand-in OpenAI-compatible provider received; `user`, `stream`
 * and `stream_options` act on the gateway's own answer (openai.test.ts).
 */

const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const lookup = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
const ask = (content: string) => [{ role: 'user', content }];
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

type Honoured = { field: string; body: Record<string, unknown>; check: (sent: any) => void };

const honoured: Honoured[] = [
  { field: 'temperature', body: { temperature: 0.2 }, check: (sent) => assert.equal(sent.temperature, 0.2) },
  { field: 'temperature (default)', body: {}, check: (sent) => assert.equal(sent.temperature, 0.7) },
  { field: 'top_p', body: { top_p: 0.4 }, check: (sent) => assert.equal(sent.top_p, 0.4) },
  { field: 'stop', body: { stop: ['END', 'STOP'] }, check: (sent) => assert.deepEqual(sent.stop, ['END', 'STOP']) },
  { field: 'stop (a string)', body: { stop: 'END' }, check: (sent) => assert.deepEqual(sent.stop, ['END']) },
  { field: 'frequency_penalty', body: { frequency_penalty: 0.5 }, check: (sent) => assert.equal(sent.frequency_penalty, 0.5) },
  { field: 'presence_penalty', body: { presence_penalty: -0.5 }, check: (sent) => assert.equal(sent.presence_penalty, -0.5) },
  { field: 'seed', body: { seed: 42 }, check: (sent) => assert.equal(sent.seed, 42) },
  { field: 'max_tokens', body: { max_tokens: 99 }, check: (sent) => assert.equal(sent.max_tokens, 99) },
  { field: 'max_completion_tokens', body: { max_completion_tokens: 77, max_tokens: 99 }, check: (sent) => assert.equal(sent.max_tokens, 77) },
  { field: 'n', body: { n: 1 }, check: (sent) => assert.equal(sent.n, undefined) },
  { field: 'model', body: { model: 'service-chat' }, check: (sent) => assert.equal(sent.model, 'stand-in-model') },
  {
    field: 'messages (developer, system, name)', body: { messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'Hi', name: 'ana' }] },
    check: (sent) => assert.deepEqual(sent.messages.map((message: any) => [message.role, message.content]), [['system', 'Be brief.'], ['user', 'Hi']]),
  },
  { field: 'tools', body: { tools: [weather] }, check: (sent) => assert.deepEqual(sent.tools.map((tool: any) => [tool.type, tool.function.name, tool.function.parameters.required]), [['function', 'get_weather', ['city']]]) },
  { field: 'tool_choice (required)', body: { tools: [weather], tool_choice: 'required' }, check: (sent) => assert.equal(sent.tool_choice, 'required') },
  { field: 'tool_choice (none)', body: { tools: [weather], tool_choice: 'none' }, check: (sent) => assert.equal(sent.tool_choice, 'none') },
  { field: 'tool_choice (a function)', body: { tools: [weather, lookup], tool_choice: { type: 'function', function: { name: 'lookup' } } }, check: (sent) => assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: 'lookup' } }) },
  {
    field: 'messages (tool_calls and tool)', body: {
      tools: [weather],
      messages: [{ role: 'user', content: 'Weather in Oslo?' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }],
    },
    check: (sent) => {
      const conversation = sent.messages.filter((message: any) => message.role !== 'system');
      assert.deepEqual(conversation.map((message: any) => message.role), ['user', 'assistant', 'tool']);
      assert.deepEqual(conversation[1].tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
      assert.deepEqual([conversation[2].tool_call_id, conversation[2].content], ['call_1', 'sunny']);
    },
  },
  {
    field: 'response_format (json_schema)', body: { messages: ask('json please'), response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } } },
    check: (sent) => {
      assert.equal(sent.response_format.type, 'json_schema');
      assert.equal(sent.response_format.json_schema.name, 'verdict');
      assert.deepEqual(sent.response_format.json_schema.schema, schema);
    },
  },
  { field: 'response_format (json_object)', body: { messages: ask('json please'), response_format: { type: 'json_object' } }, check: (sent) => assert.equal(sent.response_format.type, 'json_object') },
  { field: 'response_format (text)', body: { response_format: { type: 'text' } }, check: (sent) => assert.equal(sent.response_format, undefined) },
  { field: 'logprobs (false)', body: { logprobs: false }, check: (sent) => assert.equal(sent.logprobs, undefined) },
  { field: 'store (false)', body: { store: false }, check: (sent) => assert.equal(sent.store, undefined) },
  { field: 'logit_bias (empty)', body: { logit_bias: {} }, check: (sent) => assert.equal(sent.logit_bias, undefined) },
  { field: 'metadata (empty)', body: { metadata: {} }, check: (sent) => assert.equal(sent.metadata, undefined) },
  { field: 'modalities (text)', body: { modalities: ['text'] }, check: (sent) => assert.equal(sent.modalities, undefined) },
  { field: 'service_tier (auto)', body: { service_tier: 'auto' }, check: (sent) => assert.equal(sent.service_tier, undefined) },
  { field: 'parallel_tool_calls (true)', body: { tools: [weather], parallel_tool_calls: true }, check: (sent) => assert.equal(sent.tools.length, 1) },
  {
    // As the OpenAI Agents SDK sends an earlier answer back: its text parts carry the message's role and `refusal: null`.
    field: 'an earlier answer\'s text parts with role and refusal: null (the OpenAI Agents SDK)',
    body: { messages: [{ role: 'user', content: 'My name is Ada.' }, { role: 'assistant', content: [{ type: 'text', text: 'Hello Ada.', role: 'assistant', refusal: null }] }, { role: 'user', content: 'What is my name?' }] },
    check: (sent) => assert.ok(sent.messages.some((message: { role: string; content: unknown }) => message.role === 'assistant' && JSON.stringify(message.content).includes('Hello Ada.')), JSON.stringify(sent.messages)),
  },
];

const refused: [string, Record<string, unknown>, RegExp][] = [
  ['n', { n: 2 }, /^n must be 1/],
  ['logprobs', { logprobs: true }, /^logprobs is not supported/],
  ['top_logprobs', { top_logprobs: 3 }, /^top_logprobs is not supported/],
  ['logit_bias', { logit_bias: { 50256: -100 } }, /^logit_bias is not supported/],
  ['store', { store: true }, /^store is not supported/],
  ['metadata', { metadata: { team: 'a' } }, /^metadata is not supported/],
  ['modalities', { modalities: ['text', 'audio'] }, /^modalities: audio/],
  ['service_tier', { service_tier: 'flex' }, /^service_tier flex is not supported/],
  ['audio', { audio: { voice: 'alloy', format: 'mp3' } }, /^audio: /],
  ['prediction', { prediction: { type: 'content', content: 'x' } }, /^prediction: /],
  ['functions', { functions: [{ name: 'f' }] }, /^functions: .*tools/],
  ['function_call', { function_call: 'auto' }, /^function_call: .*tool_choice/],
  ['reasoning_effort', { reasoning_effort: 'low' }, /^reasoning_effort: /],
  ['verbosity', { verbosity: 'low' }, /^verbosity: /],
  ['web_search_options', { web_search_options: {} }, /^web_search_options: /],
  ['prompt_cache_key', { prompt_cache_key: 'k' }, /^prompt_cache_key: /],
  ['safety_identifier', { safety_identifier: 'x' }, /^safety_identifier: /],
  ['an undocumented field', { shiny_new_option: true }, /unknown field in body: shiny_new_option/],
  ['input_audio parts', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } }] }] }, /input_audio content parts are not supported/],
  ['file parts', { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] }, /file content parts are not supported/],
  ['image_url on a model without vision', { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: PNG } }] }] }, /image_url: the model local-small \(openai_compatible\) that answers here does not take images/],
  ['a part whose role is not its message\'s', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', role: 'assistant' }] }] }, /^messages\.0\.content\.0\.role: assistant is not the role of its message \(user\)/],
  ['an unknown field of a part, named (it was "content: must be string")', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', colour: 'red' }] }] }, /^unknown field in body\.messages\.0\.content\.0: colour/],
  ['image_url that is no address', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.org/cat.png' } }] }] }, /image_url\.url: a data: URL or an http\(s\) address is expected/],
];

describe('chat-completions fields: honoured (seen by the provider) or refused by name', () => {
  let standIn: StandIn;
  let gateway: Gateway;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => {
    standIn = await startStandIn({
      reply: (body) => {
        const last = body.messages.at(-1);
        if (/prose for JSON/.test(last.content)) return { content: 'not json' };
        if (/wrong arguments/.test(last.content)) return { toolCalls: [{ name: 'get_weather', arguments: '{"town":"Oslo"}' }] };
        if (body.response_format) return { content: '{"ok":true}' };
        if (body.tools && last.role === 'user' && /two calls/.test(last.content)) {
          return { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }, { name: 'get_weather', arguments: '{"city":"Rome"}' }] };
        }
        return undefined;
      },
    });
    gateway = await startGateway({ after: (fn) => cleanups.push(fn) }, { env: { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1`, OPENAI_COMPATIBLE_MODEL: 'stand-in-model' } });
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await standIn.close();
  });

  const complete = (body: Record<string, unknown>) => gateway.request('POST', '/v1/chat/completions', { model: 'service-chat', messages: ask('Hello there'), ...body });
  const callsSince = (before: number) => standIn.requests.slice(before).filter((recorded) => recorded.path === '/v1/chat/completions');
  const sentFor = async (body: Record<string, unknown>) => {
    const before = standIn.requests.length;
    const answer = await complete(body);
    assert.equal(answer.status, 200, answer.text);
    const [sent] = callsSince(before);
    assert.ok(sent, 'the provider was called');
    return { sent: sent.body, answer };
  };

  for (const row of honoured) {
    it(`honours ${row.field}`, async () => row.check((await sentFor(row.body)).sent));
  }

  for (const [field, body, message] of refused) {
    it(`refuses ${field} by name`, async () => {
      const before = standIn.requests.length;
      const answer = await complete(body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.error.message, message);
      assert.equal(answer.body.error.type, 'invalid_request_error');
      assert.deepEqual(callsSince(before), [], 'nothing reached the provider');
    });
  }

  it('names a conversation\'s session by its first message, without a model call for the title', async () => {
    const before = standIn.requests.length;
    const query = `Which rivers cross Vienna ${before}?`;
    const answer = await complete({ messages: ask(query) });
    assert.equal(answer.status, 200, answer.text);
    const { rows } = await gateway.sql.query('select s.title from sessions s join tasks t on t.session_id = s.id where t.query = $1', [query]);
    assert.deepEqual(rows, [{ title: query }]);
    // A title asked of the model would follow the answer at once, in the background.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(callsSince(before).length, 1, 'the answer\'s call only');
  });

  it('passes the provider\'s tool calls on, and parallel_tool_calls: false keeps only the first', async () => {
    const both = await sentFor({ messages: ask('two calls please'), tools: [weather] });
    assert.equal(both.answer.body.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(both.answer.body.choices[0].message.tool_calls.map((call: any) => call.function.arguments), ['{"city":"Oslo"}', '{"city":"Rome"}']);
    const one = await sentFor({ messages: ask('two calls please'), tools: [weather], parallel_tool_calls: false });
    assert.deepEqual(one.answer.body.choices[0].message.tool_calls.map((call: any) => [call.id, call.function.name, call.function.arguments]), [['call_stand_in_1', 'get_weather', '{"city":"Oslo"}']]);
  });

  it('a call of a strict function is checked against its parameters; a non-strict one is passed on as made', async () => {
    const strictWeather = { ...weather, function: { ...weather.function, strict: true } };
    const refused = await complete({ messages: ask('wrong arguments please'), tools: [strictWeather] });
    assert.equal(refused.status, 500);
    assert.match(refused.body.error.message, /the model's call of get_weather does not match its parameters \(strict\): arguments\.city is required/);
    const passed = await complete({ messages: ask('wrong arguments please'), tools: [weather] });
    assert.equal(passed.status, 200, passed.text);
    assert.equal(passed.body.choices[0].message.tool_calls[0].function.arguments, '{"town":"Oslo"}');
  });

  it('a provider answer that is not the JSON asked for is a clear error, never prose passed off as JSON', async () => {
    const answer = await complete({ messages: ask('prose for JSON please'), response_format: { type: 'json_object' } });
    assert.equal(answer.status, 500);
    assert.match(answer.body.error.message, /the model's answer is not JSON \(it begins "not json"\)/);
  });
});
