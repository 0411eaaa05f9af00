import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendTaskEvents } from '../../../src/events/append-event.ts';
import type { Db } from '../../../src/db/database.ts';
import { recordingDb } from '../../helpers/recording-db.ts';

const TASK_ID = '00000000-0000-4000-8000-000000000001';
const reservationWrite = (db: Db) => db.insertInto('token_reservations').values({ call_key: 'call#1', task_id: TASK_ID, session_id: TASK_ID, tokens: 10, cost_usd: 0 });

test('writes alongside events go in the events\' statement, one round trip for both', async () => {
  const queries: string[] = [];
  const db = recordingDb(queries) as unknown as Db;
  await appendTaskEvents(db, TASK_ID, [{ type: 'AGENT_STARTED' }], [reservationWrite(db)]);
  assert.equal(queries.length, 1);
  assert.match(queries[0], /^\s*with alongside_0 as \(insert into "token_reservations" .*\)\s+select \* from append_task_events\(/s);
});

test('without events, each write alongside is a statement of its own; without either, nothing is sent', async () => {
  const queries: string[] = [];
  const db = recordingDb(queries) as unknown as Db;
  await appendTaskEvents(db, TASK_ID, [], [reservationWrite(db)]);
  assert.deepEqual(queries.map((query) => query.split(' (')[0]), ['insert into "token_reservations"']);
  await appendTaskEvents(db, TASK_ID, []);
  assert.equal(queries.length, 1);
  await appendTaskEvents(db, TASK_ID, [{ type: 'AGENT_STARTED' }]);
  assert.match(queries[1], /^\s*select \* from append_task_events\(/);
});
