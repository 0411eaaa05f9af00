import { chmod, constants, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startChildServer, type ChildServer } from './child-server.ts';
import { freePort } from './free-port.ts';
import { isPostmasterRunning, readPostmasterPid, stopPostmaster } from '../../src/db/postmaster-process.ts';

/** Settings the caller may tune for an experiment (and the OTEL_* variables, to measure tracing); passed on to the gateway when set. */
const PASSED_SETTINGS: readonly string[] = ['WORKER_CONCURRENCY', 'DB_POOL_SIZE', 'ENGINE_DB_POOL_SIZE', 'EVENT_PARTIALS_ASYNC_COMMIT'];
const READY_TIMEOUT_MS = 120_000;

export interface Gateway extends ChildServer {
  dataDir: string;
  /** `<dataDir>/postgres`, where the postmaster writes its pid. */
  clusterDir: string;
  databaseUrl: string;
  settings: Record<string, string>;
  /**
   * Stops the gateway (and so its Postgres) and starts it again on the same directory and ports; `env`,
   * when given, replaces the settings the benchmark fixed at the start.
   */
  restart(env?: Record<string, string>): Promise<Gateway>;
}

export interface GatewayOptions {
  root: string;
  /** Directory for `--cpu-prof` output, or undefined for no profile. */
  profileDir: string | undefined;
  /** Settings a benchmark fixes for its scenario (e.g. MOCK_DELAY_MS); reported in `settings` with the passed ones. */
  env?: Record<string, string>;
}

interface Ports {
  port: number;
  postgresPort: number;
}

/**
 * Runs `src/main.ts serve` on a new embedded Postgres in a temporary DATA_DIR, on free ports.
 * `stop()` ends the gateway (which stops its Postgres) and removes the directory.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const dataDir = await createDataDir();
  try {
    return await launchGateway(options, dataDir, { port: await freePort(), postgresPort: await freePort() });
  } catch (error) {
    await removeDataDir(dataDir);
    throw error;
  }
}

/** The settings a benchmark passes on to the service: those tuned in its environment, then its own (`fixed`). */
export function serviceSettings(fixed: Record<string, string> = {}): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(process.env).flatMap(([name, value]) =>
      (value && (PASSED_SETTINGS.includes(name) || name.startsWith('OTEL_')) ? [[name, value]] : []))),
    ...fixed,
  };
}

/**
 * The whole environment of a service process: only what it needs (no provider credentials, so the mock
 * provider answers every task), warn-level logs, its place (`where`: ports, database) and `settings`.
 */
export function serviceEnvironment(where: Record<string, string>, settings: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...where, ...settings };
}

async function launchGateway(options: GatewayOptions, dataDir: string, ports: Ports): Promise<Gateway> {
  const settings = serviceSettings(options.env);
  const server = await startChildServer({
    script: 'src/main.ts',
    args: ['serve'],
    nodeFlags: options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [],
    cwd: options.root,
    env: serviceEnvironment({ PORT: String(ports.port), DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(ports.postgresPort) }, settings),
    port: ports.port,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  const clusterDir = path.join(dataDir, 'postgres');
  return {
    ...server, dataDir, clusterDir, settings,
    databaseUrl: await embeddedDatabaseUrl(dataDir, ports.postgresPort),
    stop: async () => {
      await server.stop();
      await removeDataDir(dataDir);
    },
    restart: async (env) => {
      await server.stop();
      await stopLeftoverPostgres(clusterDir);
      return launchGateway(env ? { ...options, env } : options, dataDir, ports);
    },
  };
}

export async function removeDataDir(dataDir: string): Promise<void> {
  await stopLeftoverPostgres(path.join(dataDir, 'postgres'));
  await rm(dataDir, { recursive: true, force: true });
}

/**
 * A new temporary directory for an embedded Postgres. Postgres refuses to run as root, so the embedded package
 * runs it as the `postgres` user: the data directory and every directory above it must be enterable by that user.
 */
export async function createDataDir(): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-bench-'));
  await chmod(dataDir, 0o755);
  for (let directory = path.dirname(dataDir); directory !== path.dirname(directory); directory = path.dirname(directory)) {
    await checkTraversable(directory);
  }
  return dataDir;
}

async function checkTraversable(directory: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const { mode } = await stat(directory);
  if ((mode & constants.S_IXOTH) === 0) {
    throw new Error(`${directory} is not world-traversable (chmod o+x it, or set TMPDIR): postgres runs as another user`);
  }
}

/** A gateway that had to be killed leaves its Postgres running; it must go before its directory does. */
async function stopLeftoverPostgres(clusterDir: string): Promise<void> {
  const postmaster = await readPostmasterPid(clusterDir);
  if (postmaster && await isPostmasterRunning(postmaster.pid, clusterDir)) await stopPostmaster(postmaster.pid, clusterDir);
}

/** The gateway prints no database URL; it is rebuilt the way src/db/embedded-postgres.ts builds it. */
async function embeddedDatabaseUrl(dataDir: string, port: number): Promise<string> {
  const passwordPath = path.join(dataDir, 'postgres-password');
  const password = (await readFile(passwordPath, 'utf8')).trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/agentgate`;
}
