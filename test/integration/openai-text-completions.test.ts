import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

/**
 * The legacy text completions API (`POST /v1/completions`), as the official openai client (and LangChain's `OpenAI`
 * LLM) calls it: the prompt answered by a task, streamed or not, every field honoured or refused by name.
 */

const refused: [string, Record<string, unknown>, RegExp][] = [
  ['messages (a chat sent here)', { messages: [{ role: 'user', content: 'hi' }] }, /^messages is not taken by \/v1\/completions.*\/v1\/chat\/completions/],
  ['suffix', { suffix: ' and so on' }, /^suffix is not supported/],
  ['logprobs', { logprobs: 2 }, /^logprobs is not supported/],
  ['n', { n: 2 }, /^n must be 1/],
  ['best_of', { best_of: 3 }, /^best_of must be 1/],
  ['logit_bias', { logit_bias: { 50256: -100 } }, /^logit_bias is not supported/],
  ['token ids', { prompt: [1212, 318] }, /^prompt must be text: token ids are not supported/],
  ['lists of token ids', { prompt: [[1212, 318]] }, /^prompt must be text: token ids are not supported/],
  ['several prompts', { prompt: ['one', 'two'] }, /^prompt: one prompt per request is supported \(a list of 2 was sent\)/],
  ['a null prompt', { prompt: null }, /^prompt must be text/],
  ['an empty prompt', { prompt: '  ' }, /^prompt must not be empty/],
  ['a prompt of the wrong type', { prompt: 42 }, /prompt/],
  ['a missing prompt', { prompt: undefined }, /prompt/],
  ['an undocumented field', { shiny_new_option: true }, /unknown field in body: shiny_new_option/],
  ['max_tokens of the wrong type', { max_tokens: 'many' }, /max_tokens/],
];

describe('legacy text completions with the official openai client', () => {
  const gateway = useGateway();
  const client = () => new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development', maxRetries: 0 });

  it('answers a prompt with a text_completion made by a task; streamed, the text is the same', async () => {
    const { data: completion, response } = await client().completions.create({ model: 'service-chat', prompt: 'Name a prime number', max_tokens: 200 }).withResponse();
    assert.equal(completion.object, 'text_completion');
    assert.match(completion.id, /^cmpl-\d+/);
    assert.equal(completion.model, 'service-chat');
    assert.equal(completion.choices.length, 1);
    const [choice] = completion.choices;
    assert.equal(choice.index, 0);
    assert.equal(choice.logprobs, null);
    assert.equal(choice.finish_reason, 'stop');
    assert.match(choice.text, /Mock answer to "Name a prime number" after 0 earlier messages/);
    assert.ok(completion.usage!.completion_tokens > 0);
    assert.equal(completion.usage!.total_tokens, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    const taskId = response.headers.get('x-workflow-id')!;
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.result, choice.text, 'the task behind it holds the same answer');

    const stream = await client().completions.create({ model: 'service-chat', prompt: 'Name a prime number', max_tokens: 200, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.ok(chunks.every((chunk) => chunk.object === 'text_completion' && chunk.id === chunks[0].id));
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join(''), choice.text);
    assert.ok(chunks.length > 2, 'the answer arrives in pieces as it is made');
    const last = chunks.at(-1)!;
    assert.equal(last.choices[0].finish_reason, 'stop');
    assert.ok(chunks.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null));
    assert.ok(last.usage && last.usage.total_tokens > 0);
  });

  it('stops at 16 tokens when max_tokens is not named, as OpenAI does, and says so with "length"', async () => {
    const completion = await client().completions.create({ model: 'service-chat', prompt: 'Write a long story about a dragon' });
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.equal(completion.usage!.completion_tokens, 16);
  });

  it('echo puts the prompt before the answer, streamed or not', async () => {
    const prompt = 'Say hello';
    const completion = await client().completions.create({ model: 'service-chat', prompt, echo: true, max_tokens: 200 });
    assert.ok(completion.choices[0].text.startsWith(`${prompt}System prompt`), completion.choices[0].text);
    const stream = await client().completions.create({ model: 'service-chat', prompt: [prompt], echo: true, max_tokens: 200, stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.text ?? '');
    assert.equal(pieces[0], prompt, 'the echoed prompt comes first, alone');
    assert.ok(pieces.join('').startsWith(`${prompt}System prompt`));
  });

  it('the sampling fields and the honoured defaults are accepted; an unknown model is a 404 in OpenAI\'s shape', async () => {
    const completion = await client().completions.create({
      model: 'service-chat', prompt: 'Hello', max_tokens: 50, temperature: 0.1, top_p: 0.9, stop: ['END'], presence_penalty: 0.1, frequency_penalty: 0.1,
      seed: 3, user: 'ana', n: 1, best_of: 1, logit_bias: {}, suffix: '',
    });
    assert.equal(completion.choices.length, 1);
    const missing = await client().completions.create({ model: 'text-davinci-003', prompt: 'Hello' }).catch((error: unknown) => error);
    assert.ok(missing instanceof OpenAI.NotFoundError, String(missing));
    assert.match(missing.message, /The model 'text-davinci-003' does not exist/);
  });

  for (const [what, fields, message] of refused) {
    it(`refuses ${what} by name, starting nothing`, async () => {
      const before = (await gateway().sql.query('select count(*)::int as count from tasks')).rows[0].count;
      const body = { model: 'service-chat', prompt: 'Hello', ...fields };
      const answer = await gateway().request('POST', '/v1/completions', JSON.parse(JSON.stringify(body)));
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.error.message, message);
      assert.equal(answer.body.error.type, 'invalid_request_error');
      const after = (await gateway().sql.query('select count(*)::int as count from tasks')).rows[0].count;
      assert.equal(after, before, 'no task was started');
    });
  }

  it('a body that is not JSON is a 400 in OpenAI\'s shape', async () => {
    const answer = await fetch(`${gateway().url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt": ' });
    assert.equal(answer.status, 400);
    const body = await answer.json() as { error: { type: string } };
    assert.equal(body.error.type, 'invalid_request_error');
  });
});
