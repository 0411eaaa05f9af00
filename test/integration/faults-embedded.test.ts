import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { isPostmasterRunning, readPostmasterPid } from '../../src/db/postmaster-process.ts';
import { freePort, startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { assertCompletedOnce, submitStreamingTasks, waitUntilStreaming } from '../helpers/streaming-load.ts';

interface EmbeddedGateway { gateway: Gateway; dataDir: string; clusterDir: string; port: number }

async function startEmbeddedGateway(t: TestContext): Promise<EmbeddedGateway> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-embedded-'));
  // As root, Postgres runs as the `postgres` user, which must be able to enter the directory.
  await chmod(dataDir, 0o755);
  const port = await freePort();
  const gateway = await startGateway(t, { embedded: { dataDir, port } });
  // Registered after the gateway's own cleanup, so the directory goes once the server has stopped.
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  return { gateway, dataDir, clusterDir: path.join(dataDir, 'postgres'), port };
}

async function killPostmaster(clusterDir: string): Promise<number> {
  const postmaster = await readPostmasterPid(clusterDir);
  assert.ok(postmaster, 'the embedded server runs');
  process.kill(postmaster.pid, 'SIGKILL');
  return postmaster.pid;
}

// Before: a dead embedded postmaster was never started again while /health stayed 200.
test('the embedded postmaster killed mid-load is started again: every task completes once and every stream resumes', { timeout: 180_000 }, async (t) => {
  const { gateway, clusterDir } = await startEmbeddedGateway(t);
  const { taskIds, streams } = await submitStreamingTasks(gateway, 20, 4_000);
  await waitUntilStreaming(gateway, taskIds, 5);

  const killed = await killPostmaster(clusterDir);
  await waitFor('a new postmaster', async () => {
    const postmaster = await readPostmasterPid(clusterDir);
    return postmaster && postmaster.pid !== killed && await isPostmasterRunning(postmaster.pid, clusterDir) ? true : undefined;
  }, 30_000);
  await assertCompletedOnce(gateway, taskIds, streams);
  const health = await gateway.request('GET', '/health');
  assert.equal(health.status, 200);
  assert.equal(health.body.checks.postgres, 'ok');
  assert.ok(gateway.isRunning());
});

test('/health fails while the embedded server cannot be started again, and recovers once it can', { timeout: 120_000 }, async (t) => {
  const { gateway, clusterDir, port } = await startEmbeddedGateway(t);
  // Frozen meanwhile, the gateway cannot start its server again before the port is taken (it checks every second,
  // and on a loaded machine it won that race).
  gateway.signal('SIGSTOP');
  await killPostmaster(clusterDir);
  // Take the server's port so that its restart fails.
  const squatter = net.createServer();
  await waitFor('the port to be free', async () => {
    try {
      squatter.listen(port, '127.0.0.1');
      await once(squatter, 'listening');
      return true;
    } catch {
      await sleep(20);
      return undefined;
    }
  }).finally(() => gateway.signal('SIGCONT'));
  const failing = await waitFor('/health to fail', async () => {
    const health = await gateway.request('GET', '/health');
    return health.status === 503 ? health : undefined;
  }, 30_000);
  assert.match(failing.body.checks.postgres, /^failing: could not restart/);
  assert.equal(failing.body.status, 'unhealthy');

  squatter.close();
  await waitFor('/health to recover', async () => {
    const health = await gateway.request('GET', '/health');
    return health.status === 200 && health.body.checks.postgres === 'ok' ? true : undefined;
  }, 30_000);
  const task = await gateway.request('POST', '/api/v1/tasks', { query: 'after the restart' });
  assert.equal(task.status, 200, task.text);
  assert.equal((await waitForTask(gateway, task.body.task_id, 30_000)).status, 'TASK_STATUS_COMPLETED');
});

// Before: `npm run keys` reused the server's cluster and stopped it on exit; the server then answered 500.
test('npm run keys beside a running server leaves its embedded Postgres running', { timeout: 120_000 }, async (t) => {
  const { gateway, dataDir, clusterDir, port } = await startEmbeddedGateway(t);
  const before = await readPostmasterPid(clusterDir);
  const command = spawn(process.execPath, ['src/main.ts', 'keys', 'create', '--email', 'ops@example.com'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let output = '';
  command.stdout.on('data', (chunk) => { output += chunk; });
  command.stderr.on('data', (chunk) => { output += chunk; });
  const [code] = await once(command, 'exit');
  assert.equal(code, 0, output);
  assert.match(output, /sk_(live|test)_/);

  const after = await readPostmasterPid(clusterDir);
  assert.equal(after?.pid, before?.pid, 'the same server still runs');
  assert.ok(after && await isPostmasterRunning(after.pid, clusterDir));
  const task = await gateway.request('POST', '/api/v1/tasks', { query: 'still served' });
  assert.equal(task.status, 200, task.text);
  assert.equal((await waitForTask(gateway, task.body.task_id)).status, 'TASK_STATUS_COMPLETED');
});
