import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../../src/db/database.ts';
import type { TaskRow } from '../../../src/db/schema.ts';
import { appendTaskEvents, type AlongsideWrite } from '../../../src/events/append-event.ts';
import { markStartedLater } from '../../../src/task-state/lifecycle.ts';
import { recordingDb } from '../../helpers/recording-db.ts';

const TASK_ID = '00000000-0000-4000-8000-000000000001';
const queued = { id: TASK_ID, status: 'QUEUED', mode: null, pause_requested: false, started_at: null, metadata: {} } as unknown as TaskRow;

test('a start handed to writeLater sends nothing itself and goes in the statement of the opening events', async () => {
  const queries: string[] = [];
  const db = recordingDb(queries) as unknown as Db;
  const writes: AlongsideWrite[] = [];
  const started = markStartedLater(db, queued, 'simple', { routing: { decision: 'direct' } }, (write) => writes.push(write));
  assert.equal(queries.length, 0);
  assert.deepEqual([started.status, started.mode, started.started_at], ['RUNNING', 'simple', null]);
  await appendTaskEvents(db, TASK_ID, [{ type: 'WORKFLOW_STARTED' }], writes);
  assert.equal(queries.length, 1);
  assert.match(queries[0], /^\s*with alongside_0 as \(update "tasks" set "status" = \$1, "mode" = \$2, "metadata" = metadata \|\| \$3::jsonb, "started_at" = coalesce\(started_at, now\(\)\), "updated_at" = now\(\) where "id" = \$4\)\s+select \* from append_task_events\(/s);
});

test('a task whose pause came while it was queued starts PAUSED, as markStarted writes it', () => {
  const queries: string[] = [];
  const db = recordingDb(queries) as unknown as Db;
  const started = markStartedLater(db, { ...queued, pause_requested: true }, 'simple', undefined, () => {});
  assert.equal(started.status, 'PAUSED');
});
