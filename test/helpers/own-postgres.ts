import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/db/embedded-postgres.ts';
import { readPostmasterPid, stopPostmaster } from '../../src/db/postmaster-process.ts';
import { freePort, type Cleanup } from './gateway.ts';
import { childrenOf } from './processes.ts';

/**
 * A Postgres server of the test's own, for tests that stop, restart, kill or freeze "the external database":
 * never the machine's shared server. The gateway uses it through DATABASE_URL like any external server.
 */
export interface OwnPostgres {
  /** The `agentgate` database on this server. */
  url: string;
  dataDir: string;
  /** Fast shutdown (as `pg_ctl stop -m fast`): connections are cut, the next start needs no recovery. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGKILL of the postmaster: its backends follow, the next start runs crash recovery. */
  kill(): Promise<void>;
  /** SIGSTOP every process of the server: connections stay open and nothing answers. */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
}

export async function startOwnPostgres(t: Cleanup): Promise<OwnPostgres> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-own-pg-'));
  // As root, Postgres runs as the `postgres` user, which must be able to enter the directory.
  await chmod(dataDir, 0o755);
  const clusterDir = path.join(dataDir, 'postgres');
  const port = await freePort();
  const logger = pino({ level: 'warn' });
  let handle: EmbeddedPostgresHandle | undefined = await startEmbeddedPostgres({ dataDir, port, logger });
  const url = handle.url;
  const signalServer = async (signal: NodeJS.Signals) => {
    const postmaster = await readPostmasterPid(clusterDir);
    if (!postmaster) throw new Error('the test Postgres is not running');
    for (const pid of [postmaster.pid, ...await childrenOf(postmaster.pid)]) {
      try { process.kill(pid, signal); } catch { /* already gone */ }
    }
    return postmaster.pid;
  };
  t.after(async () => {
    await signalServer('SIGCONT').catch(() => {});
    await handle?.stop().catch(() => {});
    const leftover = await readPostmasterPid(clusterDir);
    if (leftover) await stopPostmaster(leftover.pid, clusterDir).catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });
  return {
    url,
    dataDir,
    async stop() {
      await handle?.stop();
      handle = undefined;
    },
    async start() {
      handle = await startEmbeddedPostgres({ dataDir, port, logger });
    },
    async kill() {
      await signalServer('SIGKILL');
      handle = undefined;
    },
    async freeze() { await signalServer('SIGSTOP'); },
    async thaw() { await signalServer('SIGCONT'); },
  };
}
