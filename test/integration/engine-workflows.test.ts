import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, waitFor } from '../helpers/gateway.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURE = 'test/fixtures/engine-workflows-process.ts';

function runFixture(databaseUrl: string, command: 'start' | 'resume', parentId: string): { process: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [FIXTURE, databaseUrl, command, parentId], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => { output += chunk; });
  child.stderr!.on('data', (chunk) => { output += chunk; });
  return { process: child, output: () => output };
}

/** Whether the engine recorded the step of that name of the workflow (a kill after it cannot make it run again). */
async function stepRecorded(sql: pg.Pool, workflowId: string, name: string): Promise<true | undefined> {
  const { rows } = await sql.query('select 1 from dbos.operation_outputs where workflow_uuid = $1 and function_name = $2', [workflowId, name]);
  return rows.length > 0 ? true : undefined;
}

test('a child workflow started by a killed parent is not started again when the parent replays, and messages reach it', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // The database is dropped (its sessions cut) by a cleanup that may run before this pool ends.
  sql.on('error', () => {});
  t.after(() => sql.end());
  await sql.query('create table engine_test_runs (workflow_id text not null, what text not null)');
  const parentId = randomUUID();
  const childId = `${parentId}:child:worker`;

  const first = runFixture(databaseUrl, 'start', parentId);
  t.after(() => { first.process.kill('SIGKILL'); });
  await waitFor(`the child's first step (${first.output()})`, () => stepRecorded(sql, childId, 'child-started'), 60_000);
  await waitFor('the parent waiting for a message', () => stepRecorded(sql, parentId, `parent-waiting:${childId}`), 60_000);
  first.process.kill('SIGKILL');
  await once(first.process, 'exit');

  const second = runFixture(databaseUrl, 'resume', parentId);
  t.after(() => { second.process.kill('SIGKILL'); });
  const [code] = await once(second.process, 'exit') as [number | null];
  assert.equal(code, 0, second.output());
  const { result } = JSON.parse(second.output().trim().split('\n').at(-1)!);
  assert.deepEqual(result, { label: 'w', go: 'proceed from the parent', unsent: null }, 'the child got the parent\'s message; the unsent one timed out');

  const runs = await sql.query('select workflow_id, what from engine_test_runs order by what');
  assert.deepEqual(runs.rows, [
    { workflow_id: childId, what: 'child-started' },
    { workflow_id: parentId, what: `parent-waiting:${childId}` },
  ], 'each step ran once across the kill');
  const workflows = await sql.query('select workflow_uuid, parent_workflow_id, status from dbos.workflow_status order by created_at');
  assert.deepEqual(workflows.rows, [
    { workflow_uuid: parentId, parent_workflow_id: null, status: 'SUCCESS' },
    { workflow_uuid: childId, parent_workflow_id: parentId, status: 'SUCCESS' },
  ], 'one child, under the id derived from the parent and the start\'s name');
});
