import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, jsonSchema, Output, streamText } from 'ai';
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { createMockModel } from '../../../src/llm/mock-provider.ts';

const system = 'You are a terse assistant who answers briefly.';
const messages = [
  { role: 'user' as const, content: 'What is the capital of France?' },
  { role: 'assistant' as const, content: 'Paris is the capital of France, of course.' },
  { role: 'user' as const, content: 'And of Italy?' },
];

function callOptions(overrides: Partial<LanguageModelV3CallOptions> = {}): LanguageModelV3CallOptions {
  return {
    prompt: [
      { role: 'system', content: system },
      ...messages.map((message) =>
        ({ role: message.role, content: [{ type: 'text' as const, text: message.content }] })),
    ],
    ...overrides,
  };
}

async function readParts(stream: ReadableStream<LanguageModelV3StreamPart>) {
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

test('the answer quotes the system prompt, the query and the previous turn, and counts earlier messages', async () => {
  const result = await generateText({ model: createMockModel('mock-small'), system, messages });
  assert.equal(result.text, 'System prompt "You are a terse assistant who …". Mock answer to "And of Italy?" '
    + 'after 2 earlier messages; previous assistant turn: "Paris is the capital of France, of course.".');
  const again = await generateText({ model: createMockModel('mock-large'), system, messages });
  assert.equal(again.text, result.text);
});

test('without system prompt or history the answer only names the query', async () => {
  const result = await generateText({ model: createMockModel('mock-small'), prompt: 'Hello there' });
  assert.equal(result.text, 'Mock answer to "Hello there" after 0 earlier messages.');
});

test('the answer streams as word-sized deltas and reports usage', async () => {
  const parts = await readParts((await createMockModel('mock-small').doStream(callOptions())).stream);
  const deltas = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : []));
  assert.ok(deltas.length > 10);
  assert.ok(deltas.every((delta) => /^\S+\s?$/.test(delta)), deltas.join('|'));
  const finish = parts.at(-1);
  assert.equal(finish?.type, 'finish');
  const promptCharacters = system.length + messages.reduce((total, message) => total + message.content.length, 0);
  assert.equal(finish.usage.inputTokens.total, Math.ceil(promptCharacters / 4));
  assert.equal(finish.usage.outputTokens.total, deltas.length);
});

test('streamText through the AI SDK delivers the same text as generateText', async () => {
  const model = createMockModel('mock-small');
  const streamed = streamText({ model, system, messages });
  const chunks: string[] = [];
  for await (const chunk of streamed.textStream) chunks.push(chunk);
  const generated = await generateText({ model, system, messages });
  assert.equal(chunks.join(''), generated.text);
  assert.equal((await streamed.usage).outputTokens, chunks.length);
});

test('delayMs spreads the answer over about that many milliseconds', async () => {
  const started = performance.now();
  const options = callOptions({ providerOptions: { mock: { delayMs: 300 } } });
  const { stream } = await createMockModel('mock-small').doStream(options);
  const arrivals: number[] = [];
  for await (const part of stream) if (part.type === 'text-delta') arrivals.push(performance.now() - started);
  // Bounds that hold on a loaded machine: the answer is spread out (not one burst at the end), and never faster than asked.
  assert.ok(arrivals.at(-1)! >= 280, `last token after ${arrivals.at(-1)} ms`);
  assert.ok(arrivals.at(-1)! - arrivals[0] >= 200, `tokens spread from ${arrivals[0]} to ${arrivals.at(-1)} ms`);
});

test('delayMs keeps each token to its time from the start: a stalled reader catches up instead of stretching the answer', async () => {
  const started = performance.now();
  const options = callOptions({ providerOptions: { mock: { delayMs: 600, answerWords: 60 } } });
  const { stream } = await createMockModel('mock-small').doStream(options);
  let isStalled = false;
  let last = 0;
  for await (const part of stream) {
    if (part.type !== 'text-delta') continue;
    last = performance.now() - started;
    if (isStalled) continue;
    isStalled = true;
    // A busy process: no timer runs for 800 ms. A pause of each token's share after the one before would end
    // the answer about 1400 ms after it began; tokens kept to their schedule come in a burst once it is over.
    const until = performance.now() + 800;
    while (performance.now() < until);
  }
  assert.ok(last < 1_150, `the stall is made up: last token after ${last.toFixed(0)} ms, where a stretched answer ends after about 1400`);
});

test('latencyMs comes before the first part of every call: a text answer, a tool-call turn, a generated answer', async () => {
  const model = createMockModel('mock-small', { latencyMs: 150 });
  const toolTurn = callOptions({ providerOptions: { mock: { toolCalls: [{ tool: 'web_search', args: { query: 'x' } }] } } });
  for (const options of [callOptions(), toolTurn]) {
    const started = performance.now();
    const { stream } = await model.doStream(options);
    const parts = await readParts(stream);
    assert.ok(performance.now() - started >= 145, `answered after ${performance.now() - started} ms`);
    assert.ok(parts.some((part) => part.type === (options === toolTurn ? 'tool-call' : 'text-delta')));
  }
  const started = performance.now();
  await model.doGenerate(callOptions());
  assert.ok(performance.now() - started >= 145, `generated after ${performance.now() - started} ms`);
});

test('an abort stops the stream promptly with an AbortError', async () => {
  const controller = new AbortController();
  const { stream } = await createMockModel('mock-small').doStream(callOptions({
    abortSignal: controller.signal,
    providerOptions: { mock: { delayMs: 10_000 } },
  }));
  const reader = stream.getReader();
  const started = performance.now();
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(async () => {
    while (!(await reader.read()).done);
  }, { name: 'AbortError' });
  assert.ok(performance.now() - started < 5_000, 'stopped long before the 10 s answer would have ended');
});

test('an already aborted call is refused', async () => {
  const options = callOptions({ abortSignal: AbortSignal.abort() });
  await assert.rejects(async () => createMockModel('mock-small').doStream(options), { name: 'AbortError' });
});

test('maxOutputTokens truncates the answer and reports a length finish', async () => {
  const model = createMockModel('mock-small');
  const result = await generateText({ model, prompt: 'Hello there', maxOutputTokens: 3 });
  assert.equal(result.text, 'Mock answer to ');
  assert.equal(result.finishReason, 'length');
});

test('JSON mode answers with a value that satisfies the requested schema', async () => {
  const schema = Type.Object({
    title: Type.String({ minLength: 12 }),
    steps: Type.Array(Type.Object({ name: Type.String(), weight: Type.Number({ minimum: 2 }) }), { minItems: 2 }),
    kind: Type.Union([Type.Literal('plan'), Type.Literal('answer')]),
    done: Type.Boolean(),
    note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  });
  const result = await generateText({
    model: createMockModel('mock-medium'),
    prompt: 'Make a plan',
    output: Output.object({ schema: jsonSchema(schema) }),
  });
  assert.ok(Value.Check(schema, result.output), JSON.stringify(result.output));
  assert.equal(result.output.steps.length, 2);
});
