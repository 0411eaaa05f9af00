import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { startGateway, type Gateway } from '../helpers/gateway.ts';
import { parseSseText } from '../helpers/sse-client.ts';

/**
 * Every request field of the Responses API (the openai client's `ResponseCreateParamsBase`: the `satisfies` below
 * fails to type-check when the client grows a field this table does not cover) is either honoured, asserted by
 * its effect on what the model provider (a local stand-in) received or on the answer, or refused by name with a
 * 400. Values that ask for nothing (an empty tool list, `truncation: "disabled"`) are accepted.
 */
type Context = { gateway: Gateway; standIn: StandIn; client: OpenAI };
type FieldCase =
  | { honoured: (context: Context) => Promise<void> }
  | { refused: unknown; noOp?: unknown };

const unique = (label: string) => `${label} ${randomBytes(4).toString('hex')}`;

/** The chat request that answered `query` (its last message), as the provider received it. */
function providerRequestFor(standIn: StandIn, query: string) {
  const request = standIn.requests.findLast((recorded) => recorded.body?.messages?.at(-1)?.content === query);
  assert.ok(request, `the provider received "${query}"`);
  return request.body as { messages: Array<{ role: string; content: string }>; max_tokens?: number; max_completion_tokens?: number };
}

const lookupTool = { type: 'function' as const, name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } }, strict: false };

const FIELDS = {
  input: { honoured: async ({ client, standIn }) => {
    const query = unique('the input');
    await client.responses.create({ input: [{ role: 'user', content: [{ type: 'input_text', text: query }] }] });
    assert.equal(providerRequestFor(standIn, query).messages.at(-1)!.role, 'user');
  } },
  instructions: { honoured: async ({ client, standIn }) => {
    const query = unique('with instructions');
    await client.responses.create({ input: query, instructions: 'Reply in haiku' });
    assert.match(providerRequestFor(standIn, query).messages[0].content, /Reply in haiku/);
  } },
  max_output_tokens: { honoured: async ({ client, standIn }) => {
    const query = unique('capped');
    await client.responses.create({ input: query, max_output_tokens: 123 });
    const sent = providerRequestFor(standIn, query);
    assert.equal(sent.max_tokens ?? sent.max_completion_tokens, 123);
  } },
  previous_response_id: { honoured: async ({ client, standIn }) => {
    const first = await client.responses.create({ input: unique('first turn') });
    const query = unique('second turn');
    await client.responses.create({ input: query, previous_response_id: first.id });
    const roles = providerRequestFor(standIn, query).messages.filter((message) => message.role !== 'system').map((message) => message.role);
    assert.deepEqual(roles, ['user', 'assistant', 'user']);
  } },
  model: { honoured: async ({ client, gateway }) => {
    const query = unique('planned');
    const response = await client.responses.create({ input: query, model: 'service-standard' });
    assert.equal(response.model, 'service-standard');
    const { rows } = await gateway.sql.query(`select requested_mode from tasks where query = $1`, [query]);
    assert.equal(rows[0].requested_mode, 'standard');
  } },
  metadata: { honoured: async ({ client }) => {
    const response = await client.responses.create({ input: unique('tagged'), metadata: { ticket: 'T-1' } });
    assert.deepEqual((await client.responses.retrieve(response.id)).metadata, { ticket: 'T-1' });
  } },
  user: { honoured: async ({ client }) => {
    const response = await client.responses.create({ input: unique('user'), user: 'end-user-7' });
    assert.equal(response.user, 'end-user-7');
  } },
  safety_identifier: { honoured: async ({ client }) => {
    const response = await client.responses.create({ input: unique('safety'), safety_identifier: 'hashed-user' });
    assert.equal(response.safety_identifier, 'hashed-user');
  } },
  parallel_tool_calls: { honoured: async ({ client }) => {
    const response = await client.responses.create({ input: unique('parallel'), parallel_tool_calls: false });
    assert.equal(response.parallel_tool_calls, false);
  } },
  store: { honoured: async ({ client }) => {
    const response = await client.responses.create({ input: unique('unstored'), store: false });
    await assert.rejects(client.responses.retrieve(response.id), (error: { status?: number }) => error.status === 404);
  } },
  stream: { honoured: async ({ gateway }) => {
    const answer = await gateway.requestRaw('POST', '/v1/responses', JSON.stringify({ input: unique('streamed'), stream: true }), { 'content-type': 'application/json' });
    assert.match(answer.headers.get('content-type')!, /text\/event-stream/);
    assert.equal(parseSseText(answer.text).at(-1)?.event, 'response.completed');
  } },
  stream_options: { refused: { include_obfuscation: true }, noOp: { include_obfuscation: false } },
  background: { honoured: async ({ client }) => {
    const response = await client.responses.create({ input: unique('background'), background: true });
    assert.equal(response.background, true);
    assert.notEqual(response.status, 'failed');
  } },
  temperature: { honoured: async ({ client, standIn }) => {
    const query = unique('cool');
    const response = await client.responses.create({ input: query, temperature: 0.2 });
    assert.equal(response.temperature, 0.2);
    assert.equal((providerRequestFor(standIn, query) as { temperature?: number }).temperature, 0.2);
    const unset = unique('default temperature');
    await client.responses.create({ input: unset });
    assert.equal((providerRequestFor(standIn, unset) as { temperature?: number }).temperature, 0.7, 'spec 4.11 default');
  } },
  top_p: { honoured: async ({ client, standIn }) => {
    const query = unique('nucleus');
    await client.responses.create({ input: query, top_p: 0.5 });
    assert.equal((providerRequestFor(standIn, query) as { top_p?: number }).top_p, 0.5);
  } },
  tools: { honoured: async ({ client, standIn }) => {
    const query = unique('with a tool');
    await client.responses.create({ input: query, tools: [lookupTool] });
    const sent = providerRequestFor(standIn, query) as { tools?: Array<{ function: { name: string } }> };
    assert.deepEqual(sent.tools?.map((tool) => tool.function.name), ['lookup']);
  } },
  tool_choice: { honoured: async ({ client, standIn }) => {
    const query = unique('forced tool');
    await client.responses.create({ input: query, tools: [lookupTool], tool_choice: 'required' });
    assert.equal((providerRequestFor(standIn, query) as { tool_choice?: unknown }).tool_choice, 'required');
  } },
  text: { honoured: async ({ client, standIn }) => {
    const query = unique('as json');
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const response = await client.responses.create({ input: query, text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } });
    const sent = providerRequestFor(standIn, query) as { response_format?: { type: string; json_schema?: { name: string } } };
    assert.equal(sent.response_format?.type, 'json_schema');
    assert.equal(sent.response_format?.json_schema?.name, 'answer');
    assert.equal(response.status, 'failed', 'the stand-in answers prose: never passed off as JSON');
  } },
  truncation: { refused: 'auto', noOp: 'disabled' },
  include: { refused: ['reasoning.encrypted_content'], noOp: [] },
  reasoning: { refused: { effort: 'high' }, noOp: {} },
  service_tier: { refused: 'flex', noOp: 'auto' },
  prompt: { refused: { id: 'pmpt_1' } },
  conversation: { refused: 'conv_1' },
  top_logprobs: { refused: 3, noOp: 0 },
  prompt_cache_key: { refused: 'cache-key' },
  prompt_cache_retention: { refused: '24h' },
  prompt_cache_options: { refused: { mode: 'explicit' } },
  context_management: { refused: [{ type: 'compaction' }], noOp: [] },
  moderation: { refused: { model: 'omni-moderation-latest' } },
} satisfies Record<keyof ResponseCreateParamsBase, FieldCase>;

describe('Responses API: every request field is honoured or refused by name', () => {
  let standIn: StandIn;
  let started: Gateway;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => {
    standIn = await startStandIn({ answer: 'Answer from the stand-in.' });
    cleanups.push(() => standIn.close());
    started = await startGateway({ after: (cleanup) => cleanups.push(cleanup) }, { env: { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1` } });
  });
  after(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); });
  const gateway = () => started;
  const context = (): Context => ({ gateway: gateway(), standIn, client: new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'x', maxRetries: 0 }) });

  for (const [field, fieldCase] of Object.entries(FIELDS) as Array<[string, FieldCase]>) {
    if ('honoured' in fieldCase) {
      test(`${field} is honoured`, () => fieldCase.honoured(context()));
      continue;
    }
    test(`${field}: ${JSON.stringify(fieldCase.refused)} is refused naming the field`, async () => {
      const answer = await gateway().request('POST', '/v1/responses', { input: 'x', [field]: fieldCase.refused });
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.body.error.type, 'invalid_request_error');
      assert.ok(answer.body.error.message.startsWith(field), answer.body.error.message);
    });
    if ('noOp' in fieldCase) test(`${field}: ${JSON.stringify(fieldCase.noOp)} asks for nothing and is accepted`, async () => {
      const answer = await gateway().request('POST', '/v1/responses', { input: unique('no-op'), [field]: fieldCase.noOp });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.status, 'completed');
    });
  }
});
