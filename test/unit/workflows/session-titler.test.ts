import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'node:test';
import { pino } from 'pino';
import { createSessionTitler, type TitlerDeps } from '../../../src/workflows/memory/session-titles.ts';
import { recordingDb } from '../../helpers/recording-db.ts';

test('a completed task nudges the titler to look for untitled sessions, unless its completion named the session itself', async () => {
  const queries: string[] = [];
  const db = recordingDb(queries);
  const titler = createSessionTitler({ db, logger: pino({ level: 'silent' }) } as unknown as TitlerDeps);
  const task = { id: 't-1', sessionId: 's-1', query: 'What is the capital of France?' };

  titler.nudge({ ...task, context: { openai_model: 'service-chat' } });
  await nextTurn();
  assert.deepEqual(queries, [], 'an OpenAI-layer conversation was named by its query as the task completed: nothing to look for');

  titler.nudge({ ...task, context: {} });
  await nextTurn();
  assert.equal(queries.length, 1, 'a task of the native API leaves its session to the titler, which looks for it');
  assert.match(queries[0], /from sessions s join tasks t/);
});
