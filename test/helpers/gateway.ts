import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before } from 'node:test';
import pg from 'pg';
import { childEnv } from './child-env.ts';
import { databaseUrlFor } from './template-database.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Longer than any drain a test sets (SHUTDOWN_GRACE_SECONDS) plus closing. */
const TEARDOWN_STOP_MS = 60_000;

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface Gateway {
  url: string;
  databaseUrl: string;
  /** A client on the gateway's own database, for assertions on what was (not) written. */
  sql: pg.Pool;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Sends a raw body (malformed JSON, wrong content type...). */
  requestRaw(method: string, path: string, body: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Sends the signal and waits for the process to exit; resolves with how it exited. */
  kill(signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** Sends a signal and returns at once (SIGSTOP and SIGCONT freeze and thaw the process). */
  signal(signal: NodeJS.Signals): void;
  /** Resolves when the process exits, however that comes about. */
  exited(): Promise<ExitInfo>;
  restart(): Promise<void>;
  /** False once the server process has exited, whatever the reason. */
  isRunning(): boolean;
  /** The server process's id (of its latest start), e.g. to read its memory in /proc. */
  pid(): number;
  output(): string;
}

export interface ExitInfo { code: number | null; signal: NodeJS.Signals | null; durationMs: number }

/** Anything that runs cleanups when the test ends: a TestContext, or the registry of `useGateway`. */
export interface Cleanup { after(fn: () => Promise<void> | void): void }

export interface GatewayOptions {
  env?: Record<string, string>;
  /** Run on the embedded Postgres in this DATA_DIR (the `npm start` footprint) instead of a test database. */
  embedded?: { dataDir: string; port: number };
  /** Reuse another gateway's database (a second process on the same Postgres). */
  databaseUrl?: string;
  /** Extra arguments after `serve`, e.g. `['--role', 'gateway']`. */
  args?: string[];
  /** The /readiness status that means "started" (a test of an unready gateway waits for 503). */
  readinessStatus?: number;
}

/**
 * Pool sizes the run sets for every gateway (CI's run on a shared external Postgres with 100 connections uses
 * smaller pools, so that three test files with their gateways fit at once).
 */
function poolSizesFromEnvironment(): Record<string, string> {
  const names = ['DB_POOL_SIZE', 'ENGINE_DB_POOL_SIZE'] as const;
  return Object.fromEntries(names.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
}

/** Creates a fresh database, spawns `src/main.ts serve` on it with this Node, and waits for readiness. */
export async function startGateway(t: Cleanup, options: GatewayOptions = {}): Promise<Gateway> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const databaseUrl = options.embedded ? '' : options.databaseUrl ?? await createTestDatabase({ after: (fn) => cleanups.push(fn) }, { migrated: true });
  const databaseEnv: Record<string, string> = options.embedded
    ? { DATA_DIR: options.embedded.dataDir, EMBEDDED_PG_PORT: String(options.embedded.port) }
    : { DATABASE_URL: databaseUrl };
  // The first start binds port 0 and says which port it got (no race with another process for a port
  // picked in advance); restarts take the same port again, as a redeployed server would.
  let port = 0;
  let url = '';
  const sqlPool = new pg.Pool({ ...(options.embedded ? embeddedConnection(options.embedded) : { connectionString: databaseUrl }), max: 3 });
  sqlPool.on('error', () => {});
  let child: ChildProcess | undefined;
  let log = '';

  const launch = async () => {
    const started = spawn(process.execPath, ['src/main.ts', 'serve', ...options.args ?? []], {
      cwd: ROOT,
      env: {
        ...childEnv(), ...databaseEnv,
        // Tests that do not name a mode get the one-agent answer they were written for; planning tests set `auto`.
        // A test's end (SIGTERM) drains for at most 2 s, not the default 25: shutdown tests set their own.
        // A stand-in that always fails fails its task at once, not after 10 minutes of parked retries: the outage
        // tests (provider-outage.test.ts) set their own wait.
        PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DEFAULT_TASK_MODE: 'simple', SHUTDOWN_GRACE_SECONDS: '2', PROVIDER_OUTAGE_WAIT_SECONDS: '0',
        ...poolSizesFromEnvironment(), ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    started.stdout!.on('data', (chunk) => { log += chunk; });
    started.stderr!.on('data', (chunk) => { log += chunk; });
    url = await waitForListening(started, () => log);
    port = Number(new URL(url).port);
    await waitForReady(url, started, () => log, options.readinessStatus ?? 200);
  };
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<ExitInfo> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return { code: child?.exitCode ?? null, signal: child?.signalCode ?? null, durationMs: 0 };
    const startedAt = Date.now();
    const exited = once(child, 'exit');
    child.kill(signal);
    // A process frozen by a test (SIGSTOP) acts on the signal only once thawed; SIGCONT to a running one does nothing.
    child.kill('SIGCONT');
    const [code, exitSignal] = await exited as [number | null, NodeJS.Signals | null];
    return { code, signal: exitSignal, durationMs: Date.now() - startedAt };
  };

  // Stop the server and our pool before the database is dropped.
  t.after(async () => {
    // A server that does not stop on SIGTERM fails its test (below) rather than holding up the whole run.
    const stopped = await Promise.race([kill('SIGTERM'), sleep(TEARDOWN_STOP_MS, undefined, { ref: false })]);
    if (!stopped) await kill('SIGKILL');
    await sqlPool.end();
    for (const cleanup of cleanups) await cleanup();
    // Issue 13: no deprecation warning at start-up or under load (e.g. one pg client queried by two callers at once).
    const warning = /^.*DeprecationWarning.*$/m.exec(log);
    if (warning) throw new Error(`the gateway printed a deprecation warning: ${warning[0]}`);
    if (!stopped) throw new Error(`the gateway did not stop within ${TEARDOWN_STOP_MS} ms of SIGTERM:\n${log.slice(-4000)}`);
  });
  await launch();
  const send = (method: string, requestPath: string, body: string | undefined, headers: Record<string, string>) =>
    fetch(url + requestPath, { method, body, headers }).then(toAnswer);
  return {
    url,
    databaseUrl,
    sql: sqlPool,
    request: (method, requestPath, body, headers = {}) => send(method, requestPath,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? headers : { 'content-type': 'application/json', ...headers }),
    requestRaw: (method, requestPath, body, headers = {}) => send(method, requestPath, body, headers),
    kill,
    signal: (signal) => { child?.kill(signal); },
    exited: async () => {
      const startedAt = Date.now();
      if (child && child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      return { code: child?.exitCode ?? null, signal: child?.signalCode ?? null, durationMs: Date.now() - startedAt };
    },
    restart: async () => { await kill('SIGTERM'); await launch(); },
    isRunning: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    pid: () => child!.pid!,
    output: () => log,
  };
}

/** The embedded server's password file exists only after its first start, hence the lazy password. */
function embeddedConnection(embedded: { dataDir: string; port: number }): pg.PoolConfig {
  return {
    host: '127.0.0.1', port: embedded.port, user: 'postgres', database: 'agentgate',
    password: () => readFile(path.join(embedded.dataDir, 'postgres-password'), 'utf8').then((text) => text.trim()),
  };
}

/** Starts one gateway for a `describe` block (before all its tests) and stops it after them. */
export function useGateway(options: GatewayOptions = {}): () => Gateway {
  let gateway: Gateway | undefined;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => { gateway = await startGateway({ after: (fn) => cleanups.push(fn) }, options); });
  after(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); });
  return () => gateway!;
}

async function toAnswer(response: Response): Promise<HttpAnswer> {
  const text = await response.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: response.status, headers: response.headers, body, text };
}

/** The URL the server reports once it listens (its start-up line is logged whatever the log level). */
async function waitForListening(child: ChildProcess, output: () => string): Promise<string> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output()}`);
    const started = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"agentgate started"/.exec(output());
    if (started) return started[1];
    await sleep(50);
  }
  throw new Error(`gateway did not start listening after 60 s:\n${output()}`);
}

async function waitForReady(url: string, child: ChildProcess, output: () => string, expectedStatus: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(`${url}/readiness`);
      if (response.status === expectedStatus) return;
    } catch { /* not listening yet */ }
    await sleep(100);
  }
  throw new Error(`gateway not ready after 60 s:\n${output()}`);
}

/**
 * A new database on the test Postgres server, dropped when the test ends: empty, or `migrated` (a copy of the run's
 * template database, when the global setup made one; a gateway started on an empty one migrates it itself).
 */
export async function createTestDatabase(t: Cleanup, { migrated = false } = {}): Promise<string> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set: run the suite with `npm test` (its global setup provides Postgres)');
  const name = `agentgate_test_${randomBytes(6).toString('hex')}`;
  const template = migrated ? process.env.TEST_TEMPLATE_DATABASE : undefined;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  t.after(async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    try {
      await cleanup.query(`drop database if exists ${name} with (force)`);
    } finally {
      await cleanup.end();
    }
  });
  return databaseUrlFor(adminUrl, name);
}

/** Runs a command of the server (`serve` by default) on a database, for one expected to refuse to start: how it ended. */
export async function runRefused(databaseUrl: string, env: Record<string, string>, args = ['serve']): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: ROOT, env: { ...childEnv(), DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => { output += chunk; });
  child.stderr!.on('data', (chunk) => { output += chunk; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = await once(child, 'exit') as [number | null];
  clearTimeout(timer);
  return { code, output };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  return port;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(description: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${description}${last ? `: ${String(last)}` : ''}`);
}

/** Waits until the task reaches a terminal status and returns its status body. */
export async function waitForTask(gateway: Gateway, taskId: string, timeoutMs = 20_000, headers: Record<string, string> = {}): Promise<any> {
  return waitFor(`task ${taskId} to finish`, async () => {
    const answer = await gateway.request('GET', `/api/v1/tasks/${taskId}`, undefined, headers);
    const terminal = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'].map((status) => `TASK_STATUS_${status}`);
    return terminal.includes(answer.body.status) ? answer.body : undefined;
  }, timeoutMs);
}

/**
 * Sends a request the way a well-behaved client does: a 503 (on a loaded machine a request can wait longer for a
 * database connection than DB_CONNECT_TIMEOUT_MS) is tried again after its Retry-After, up to `attempts` times.
 */
export async function honouringRetryAfter<T extends { status: number; headers: Headers }>(send: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    if (answer.status !== 503 || attempt === attempts) return answer;
    await sleep(Number(answer.headers.get('retry-after') ?? 1) * 1000);
  }
}
