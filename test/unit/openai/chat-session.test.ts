import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Caller } from '../../../src/auth/caller.ts';
import type { Deps } from '../../../src/deps.ts';
import { answerKey, continuationKey, resolveChatSession } from '../../../src/openai/chat-session.ts';
import { toChatTask } from '../../../src/openai/chat-task.ts';
import { SERVICE_MODELS } from '../../../src/openai/models.ts';
import { recordingDb } from '../../helpers/recording-db.ts';

type Message = { role: 'system' | 'user' | 'assistant'; content: string };
const model = SERVICE_MODELS[0];
const chatOf = (messages: Message[]) => toChatTask({ messages } as never, model);
const keyOf = (messages: Message[], user?: string) => continuationKey(user, chatOf(messages));
const answer = (content: string) => ({ role: 'assistant', content });

test('the transcript remembered with an answer is the one the next turn looks up', () => {
  const system: Message = { role: 'system', content: 'Be kind.' };
  const first = chatOf([system, { role: 'user', content: 'Hi' }]);
  const remembered = answerKey('u-1', first, answer('Hello! How can I help?'));
  const next = [system, { role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello! How can I help?' }, { role: 'user', content: 'Tell me a joke' }] as Message[];
  assert.equal(keyOf(next, 'u-1'), remembered);
  assert.equal(keyOf(next.map((message) => ({ ...message, content: `  ${message.content}\n` })), 'u-1'), remembered, 'whitespace around messages does not count');
  assert.notEqual(keyOf(next, 'u-2'), remembered, 'another end user');
  assert.notEqual(keyOf([{ role: 'system', content: 'Be rude.' }, ...next.slice(1)], 'u-1'), remembered, 'another system prompt');
  assert.notEqual(keyOf([system, next[1], { role: 'assistant', content: 'Another answer' }, next[3]], 'u-1'), remembered, 'another answer');
});

test('deriving a session costs no query for an opening and one for a later turn, however popular the opening', async () => {
  const queries: string[] = [];
  const db = recordingDb(queries);
  const deps = { db } as unknown as Deps;
  const caller = { tenantId: 't', userId: 'u' } as Caller;
  const opening = chatOf([{ role: 'user', content: 'Hi' }]);
  const session = await resolveChatSession(deps, caller, undefined, opening, 'someone');
  assert.equal(session.sessionId, undefined, 'an opening is a new conversation');
  assert.equal(session.shouldAnnounce('new-session'), true);
  assert.equal(queries.length, 0);
  const later = chatOf([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'More' }]);
  await resolveChatSession(deps, caller, undefined, later, 'someone');
  assert.equal(queries.length, 1);
  assert.match(queries[0], /from chat_transcripts/);
  await session.rememberAnswer('new-session', answer('Hello'));
  assert.equal(queries.length, 2);
  assert.match(queries[1], /insert into chat_transcripts/);
});

test('a turn that returns tool results continues the conversation whose answer called the tools', () => {
  const question = { role: 'user', content: 'Weather in Oslo?' };
  const first = toChatTask({ messages: [question], tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] } as never, model);
  const calls = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }];
  const remembered = answerKey(undefined, first, { role: 'assistant', content: `\n${JSON.stringify([['call_1', 'get_weather', { city: 'Oslo' }]])}` });
  const next = toChatTask({ messages: [question, { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: 'call_1', content: '4 degrees' }] } as never, model);
  assert.equal(continuationKey(undefined, next), remembered);
  const respaced = [{ ...calls[0], function: { name: 'get_weather', arguments: '{ "city": "Oslo" }' } }];
  const again = toChatTask({ messages: [question, { role: 'assistant', content: null, tool_calls: respaced }, { role: 'tool', tool_call_id: 'call_1', content: '4 degrees' }] } as never, model);
  assert.equal(continuationKey(undefined, again), remembered, 'arguments re-serialised with other spacing');
});
