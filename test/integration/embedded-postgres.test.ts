import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort, startGateway, waitForTask } from '../helpers/gateway.ts';

test('the npm start footprint: embedded Postgres under DATA_DIR survives kill -9 and shuts down cleanly', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-embedded-'));
  // Postgres runs as the `postgres` user when we are root: it must be able to enter the directory.
  await chmod(dataDir, 0o755);
  const gateway = await startGateway(t, { embedded: { dataDir, port: await freePort() } });
  // Registered after the gateway's own cleanup, so the directory goes once the server has stopped.
  t.after(() => rm(dataDir, { recursive: true, force: true }));

  const first = await gateway.request('POST', '/api/v1/tasks', { query: 'before the crash' });
  assert.equal((await waitForTask(gateway, first.body.task_id)).status, 'TASK_STATUS_COMPLETED');

  await gateway.kill('SIGKILL');
  await gateway.restart();
  const again = await gateway.request('GET', `/api/v1/tasks/${first.body.task_id}`);
  assert.equal(again.body.status, 'TASK_STATUS_COMPLETED', 'data survived the crash');
  const second = await gateway.request('POST', '/api/v1/tasks', { query: 'after the crash' });
  assert.equal((await waitForTask(gateway, second.body.task_id)).status, 'TASK_STATUS_COMPLETED');

  await gateway.kill('SIGTERM');
  await assert.rejects(stat(path.join(dataDir, 'postgres', 'postmaster.pid')), 'a clean shutdown stops Postgres');
});
