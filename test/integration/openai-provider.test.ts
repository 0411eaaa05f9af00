import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { start as startStandIn, type StandIn } from '../fixtures/openai-responses-stand-in.ts';
import { startGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { ONE_PIXEL_PNG } from '../fixtures/image-site.ts';

// The catalogue's `kind: openai` deployments (OpenAI itself, gpt-5-nano first in the small tier) are called over the
// Responses API, the wire the AI SDK's OpenAI provider speaks: here a stand-in of it, behind OPENAI_BASE_URL.
const PNG = `data:image/png;base64,${ONE_PIXEL_PNG}`;

describe('OpenAI as a provider, over the Responses API', () => {
  let standIn: StandIn;
  let gateway: Gateway;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => {
    standIn = await startStandIn({
      cachedTokens: 10,
      // The first request answers 429 with Retry-After: the call waits it out, the task never sees it.
      script: (index) => (index === 0 ? { status: 429, retryAfterMs: 1000, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' } : undefined),
      reply: (body) => {
        const answered = (body.input ?? []).some((item: { type?: string }) => item.type === 'function_call_output');
        if (body.tools?.length && !answered) return { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] };
        return undefined;
      },
    });
    gateway = await startGateway({ after: (fn) => cleanups.push(fn) }, { env: { OPENAI_API_KEY: 'sk-stand-in', OPENAI_BASE_URL: `${standIn.url}/v1` } });
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await standIn.close();
  });
  const calls = () => standIn.requests.filter((request) => request.path === '/v1/responses');

  it('a task is answered by gpt-5-nano through the stand-in: a 429 waited out, tokens and cached tokens priced', async () => {
    const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'Say hello', mode: 'simple' });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway, submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.result, 'Hello from the Responses stand-in.');
    const [refused, answered] = calls();
    assert.equal(refused.status, 429);
    assert.ok(answered.at - refused.at >= 900, `retried after its Retry-After (${answered.at - refused.at} ms)`);
    assert.equal(answered.body.model, 'gpt-5-nano');
    assert.equal(answered.body.stream, true);
    assert.equal(answered.headers.authorization, 'Bearer sk-stand-in');
    const { rows } = await gateway.sql.query(`select provider, model, input_tokens, output_tokens, cached_input_tokens, cost_usd from usage_records where task_id = $1 and provider = 'openai'`, [task.task_id]);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.deepEqual({ ...rows[0], cost_usd: undefined }, { provider: 'openai', model: 'gpt-5-nano', input_tokens: 13, output_tokens: 8, cached_input_tokens: 10, cost_usd: undefined });
    // 3 input tokens at $0.05/M, 10 cached at $0.005/M, 8 output at $0.40/M.
    assert.ok(Math.abs(Number(rows[0].cost_usd) - 3.4e-6) < 1e-9, String(rows[0].cost_usd));
  });

  it('a client function call goes out as a function_call item and its output comes back; an image keeps its detail', async () => {
    const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
    const question = { role: 'user', content: [{ type: 'text', text: 'Weather where this was taken?' }, { type: 'image_url', image_url: { url: PNG, detail: 'high' } }] };
    const first = await gateway.request('POST', '/v1/chat/completions', { model: 'service-chat', messages: [question], tools: [weather] });
    assert.equal(first.status, 200, first.text);
    const [call] = first.body.choices[0].message.tool_calls;
    assert.deepEqual([call.function.name, JSON.parse(call.function.arguments)], ['get_weather', { city: 'Oslo' }]);
    const sentUser = calls().at(-1)!.body.input.find((item: { role?: string }) => item.role === 'user');
    const sentImage = sentUser.content.find((part: { type: string }) => part.type === 'input_image');
    assert.equal(sentImage.detail, 'high', 'the image detail reached OpenAI');

    const second = await gateway.request('POST', '/v1/chat/completions', {
      model: 'service-chat', tools: [weather], messages: [question, first.body.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sleet' }],
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.choices[0].message.content, 'Hello from the Responses stand-in.');
    const output = calls().at(-1)!.body.input.find((item: { type?: string }) => item.type === 'function_call_output');
    assert.deepEqual({ call_id: output.call_id, output: output.output }, { call_id: call.id, output: 'sleet' });
  });
});
