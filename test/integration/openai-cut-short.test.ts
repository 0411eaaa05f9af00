import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { startGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';

/**
 * What the model did, told as it was: an answer the output limit cut short is `finish_reason: "length"` (chat) or an
 * incomplete response (Responses API), never a complete one; the input read from the provider's prompt cache shows
 * as `cached_tokens`. Checked with the official openai client against a stand-in provider that reports both.
 */

const CACHED = 640;

describe('the OpenAI layer says when an answer was cut short, and how much input the cache gave', () => {
  let standIn: StandIn;
  let gateway: Gateway;
  let client: OpenAI;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => {
    standIn = await startStandIn({
      cachedTokens: CACHED,
      usage: { promptTokens: 1000, completionTokens: 12 },
      reply: (body) => {
        const text = JSON.stringify(body.messages.at(-1)?.content ?? '');
        if (/long story/.test(text)) return { content: 'Once upon a time there was a dragon who', finishReason: 'length' };
        if (/forbidden/.test(text)) return { content: 'I cannot', finishReason: 'content_filter' };
        return undefined;
      },
    });
    gateway = await startGateway({ after: (fn) => cleanups.push(fn) }, { env: { OPENAI_COMPATIBLE_BASE_URL: `${standIn.url}/v1`, OPENAI_COMPATIBLE_MODEL: 'stand-in-model' } });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed-in-development', maxRetries: 0 });
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await standIn.close();
  });

  const ask = (content: string) => [{ role: 'user' as const, content }];

  it('a chat completion cut at max_tokens ends with finish_reason "length" and reports its cached prompt tokens', async () => {
    const completion = await client.chat.completions.create({ model: 'service-chat', max_tokens: 9, messages: ask('Tell me a long story') });
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.equal(completion.choices[0].message.content, 'Once upon a time there was a dragon who');
    assert.equal(completion.usage?.prompt_tokens, 1000);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, CACHED);
  });

  it('a natural end is still "stop", and a content filter is named', async () => {
    const natural = await client.chat.completions.create({ model: 'service-chat', messages: ask('Say hello') });
    assert.equal(natural.choices[0].finish_reason, 'stop');
    const filtered = await client.chat.completions.create({ model: 'service-chat', messages: ask('Something forbidden') });
    assert.equal(filtered.choices[0].finish_reason, 'content_filter');
  });

  it('a streamed chat completion cut short ends with "length", its usage chunk counting the cached tokens', async () => {
    const stream = await client.chat.completions.create({ model: 'service-chat', max_tokens: 9, stream: true, stream_options: { include_usage: true }, messages: ask('Tell me a long story') });
    const reasons: string[] = [];
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        if (choice.finish_reason) reasons.push(choice.finish_reason);
      }
      usage ??= chunk.usage ?? undefined;
    }
    assert.equal(text, 'Once upon a time there was a dragon who');
    assert.deepEqual(reasons, ['length']);
    assert.equal(usage?.prompt_tokens_details?.cached_tokens, CACHED);
  });

  it('a response cut at max_output_tokens is incomplete, for max_output_tokens, with its text and cached tokens', async () => {
    const response = await client.responses.create({ model: 'service-chat', max_output_tokens: 16, input: 'Tell me a long story' });
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(response.output_text, 'Once upon a time there was a dragon who');
    const [message] = response.output;
    assert.equal(message.type === 'message' && message.status, 'incomplete');
    assert.equal(response.usage?.input_tokens_details.cached_tokens, CACHED);
    // Read again later, it is the same.
    const again = await client.responses.retrieve(response.id);
    assert.equal(again.status, 'incomplete');
    assert.deepEqual(again.incomplete_details, { reason: 'max_output_tokens' });
  });

  it('a streamed response cut short ends with response.incomplete, after its text', async () => {
    const stream = await client.responses.create({ model: 'service-chat', max_output_tokens: 16, input: 'Tell me a long story', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const last = events.at(-1)!;
    assert.equal(last.type, 'response.incomplete');
    assert.equal(last.type === 'response.incomplete' && last.response.incomplete_details?.reason, 'max_output_tokens');
    const text = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    assert.equal(text, 'Once upon a time there was a dragon who');
    assert.ok(!events.some((event) => event.type === 'response.completed'), 'never said complete');
  });

  it('a native task keeps why its answer ended: metadata.finish_reason and the final LLM_OUTPUT say "length"', async () => {
    const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'Tell me a long story', mode: 'simple', context: { max_output_tokens: 9 } });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway, submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.metadata.finish_reason, 'length');
    const events = (await gateway.request('GET', `/api/v1/tasks/${submitted.body.task_id}/events`)).body.events as Array<{ type: string; agent_id: string; payload: Record<string, unknown> }>;
    const final = events.find((event) => event.type === 'LLM_OUTPUT' && event.agent_id === 'final_output');
    assert.equal(final?.payload.finish_reason, 'length');
  });
});
