import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import type { FunctionTool, ResponseFunctionToolCall, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { useGateway } from '../helpers/gateway.ts';

const weatherTool: FunctionTool = {
  type: 'function', name: 'get_weather', description: 'The current weather of a city', strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'], additionalProperties: false },
};
const timeTool: FunctionTool = {
  type: 'function', name: 'get_time', description: 'The local time of a city', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const functionCallsOf = (output: OpenAI.Responses.ResponseOutputItem[]) => output.filter((item): item is ResponseFunctionToolCall => item.type === 'function_call');

describe('Responses API: function calling and structured output with the official openai client', () => {
  const gateway = useGateway();
  const client = () => new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development', maxRetries: 0 });

  it('a two-turn exchange: the function call goes out, its output comes back with previous_response_id, the answer uses it', async () => {
    const first = await client().responses.create({ model: 'service-chat', input: 'What is the weather in Oslo right now?', tools: [timeTool, weatherTool] });
    assert.equal(first.status, 'completed');
    const [call] = functionCallsOf(first.output);
    assert.ok(call, JSON.stringify(first.output));
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Oslo', unit: 'celsius' });
    assert.match(call.id!, /^fc_/);
    assert.equal(first.tools.length, 2, 'the tools are echoed');

    const second = await client().responses.create({
      model: 'service-chat', previous_response_id: first.id, tools: [timeTool, weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '4 degrees and sleet' }],
    });
    assert.equal(second.status, 'completed');
    assert.deepEqual(functionCallsOf(second.output), []);
    assert.match(second.output_text, /get_weather: 4 degrees and sleet/);
    const items = await client().responses.inputItems.list(second.id);
    assert.equal(items.data[0].type, 'function_call_output');
  });

  it('without previous_response_id the client sends the whole exchange back, the call item included', async () => {
    const question = { role: 'user' as const, content: 'What is the weather in Lisbon?' };
    const first = await client().responses.create({ input: [question], tools: [weatherTool] });
    const [call] = functionCallsOf(first.output);
    const second = await client().responses.create({
      tools: [weatherTool],
      input: [question, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 degrees' }],
    });
    assert.match(second.output_text, /get_weather: sunny, 21 degrees/);
  });

  it('a streamed function call arrives as output_item and function_call_arguments events, numbered without a gap', async () => {
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client().responses.create({ input: 'What is the weather in Oslo?', tools: [weatherTool], stream: true })) events.push(event);
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
    const types = events.map((event) => event.type);
    for (const type of ['response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done', 'response.completed']) {
      assert.ok(types.includes(type as ResponseStreamEvent['type']), `${type} in ${types.join(', ')}`);
    }
    const done = events.find((event) => event.type === 'response.function_call_arguments.done') as Extract<ResponseStreamEvent, { type: 'response.function_call_arguments.done' }>;
    assert.equal(done.name, 'get_weather');
    assert.deepEqual(JSON.parse(done.arguments), { city: 'Oslo', unit: 'celsius' });
    const stream = client().responses.stream({ input: 'What is the weather in Oslo?', tools: [weatherTool] });
    const final = await stream.finalResponse();
    assert.equal(functionCallsOf(final.output)[0].name, 'get_weather');
  });

  it('tool_choice: required forces a call, a named function forces that one, none forbids one', async () => {
    const required = await client().responses.create({ input: 'Hello there', tools: [weatherTool], tool_choice: 'required' });
    assert.equal(functionCallsOf(required.output)[0]?.name, 'get_weather');
    const named = await client().responses.create({ input: 'What is the weather in Lisbon?', tools: [weatherTool, timeTool], tool_choice: { type: 'function', name: 'get_time' } });
    assert.equal(functionCallsOf(named.output)[0]?.name, 'get_time');
    const none = await client().responses.create({ input: 'What is the weather in Lisbon?', tools: [weatherTool], tool_choice: 'none' });
    assert.deepEqual(functionCallsOf(none.output), []);
    assert.ok(none.output_text.length > 0);
  });

  it('text.format json_schema answers JSON valid for the schema; json_object answers an object', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'], additionalProperties: false };
    const response = await client().responses.create({ input: 'Largest city of Norway', text: { format: { type: 'json_schema', name: 'city_facts', schema, strict: true } } });
    assert.equal(response.status, 'completed');
    const value = JSON.parse(response.output_text);
    assert.ok(new Ajv().validate(schema, value), response.output_text);
    assert.deepEqual((response.text as { format: { name: string } }).format.name, 'city_facts');
    const object = await client().responses.create({ input: 'Describe Oslo as JSON', text: { format: { type: 'json_object' } } });
    const parsed = JSON.parse(object.output_text);
    assert.equal(typeof parsed, 'object');
  });

  it('refuses by name what it cannot take', async () => {
    const refusal = async (body: Record<string, unknown>) => {
      const answer = await gateway().request('POST', '/v1/responses', { input: 'What is the weather in Oslo?', ...body });
      assert.equal(answer.status, 400, answer.text);
      return answer.body.error.message as string;
    };
    assert.match(await refusal({ tools: [{ type: 'web_search' }] }), /^tools\[0\]\.type: web_search tools are not supported/);
    assert.match(await refusal({ tools: [weatherTool], tool_choice: { type: 'function', name: 'nope' } }), /nope is not one of the tools/);
    assert.match(await refusal({ tool_choice: 'required' }), /tool_choice requires tools/);
    assert.match(await refusal({ tools: [weatherTool], model: 'service-standard' }), /^tools: the service-standard model runs a workflow/);
    assert.match(await refusal({ text: { format: { type: 'json_schema', name: 'x', schema: { type: 'nope' } } } }), /invalid text\.format\.schema/);
    assert.match(await refusal({ text: { format: { type: 'json_schema', name: 'x' } } }), /text\.format\.schema is required/);
    assert.match(await refusal({ input: [{ type: 'function_call_output', call_id: 'unknown', output: 'x' }, { role: 'user', content: 'hi' }] }), /function_call_output unknown answers no function call/);
    assert.match(await refusal({ text: { verbosity: 'high' } }), /^text\.verbosity/);
  });
});
