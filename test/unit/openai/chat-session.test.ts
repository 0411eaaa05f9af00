import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { Caller } from '../../../src/auth/caller.ts';
import type { Deps } from '../../../src/deps.ts';
import { answeredTranscript, resolveChatSession, transcriptKey } from '../../../src/openai/chat-session.ts';
import { toChatTask } from '../../../src/openai/chat-task.ts';
import { SERVICE_MODELS } from '../../../src/openai/models.ts';

type Message = { role: 'system' | 'user' | 'assistant'; content: string };
const model = SERVICE_MODELS[0];
const chatOf = (messages: Message[]) => toChatTask({ messages } as never, model);
const keyOf = (messages: Message[], user?: string) => {
  const chat = chatOf(messages);
  return transcriptKey(user, chat.systemPrompt, chat.history);
};

test('the transcript remembered with an answer is the one the next turn looks up', () => {
  const system: Message = { role: 'system', content: 'Be kind.' };
  const first = chatOf([system, { role: 'user', content: 'Hi' }]);
  const remembered = transcriptKey('u-1', first.systemPrompt, answeredTranscript(first, 'Hello! How can I help?'));
  const next = [system, { role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello! How can I help?' }, { role: 'user', content: 'Tell me a joke' }] as Message[];
  assert.equal(keyOf(next, 'u-1'), remembered);
  assert.equal(keyOf(next.map((message) => ({ ...message, content: `  ${message.content}\n` })), 'u-1'), remembered, 'whitespace around messages does not count');
  assert.notEqual(keyOf(next, 'u-2'), remembered, 'another end user');
  assert.notEqual(keyOf([{ role: 'system', content: 'Be rude.' }, ...next.slice(1)], 'u-1'), remembered, 'another system prompt');
  assert.notEqual(keyOf([system, next[1], { role: 'assistant', content: 'Another answer' }, next[3]], 'u-1'), remembered, 'another answer');
});

test('deriving a session costs no query for an opening and one for a later turn, however popular the opening', async () => {
  const queries: string[] = [];
  const db = new Kysely<any>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (inner) => new PostgresIntrospector(inner),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => { queries.push(event.query.sql); },
  });
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
  await session.rememberAnswer('new-session', 'Hello');
  assert.equal(queries.length, 2);
  assert.match(queries[1], /insert into chat_transcripts/);
});
