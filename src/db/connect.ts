import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createDatabase, type Db } from './database.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.ts';
import { migrateToLatest } from './migrate.ts';
import { assertSessionConnections } from './session-check.ts';
import type { WriteRefusals } from './write-refusals.ts';

export interface DatabaseConnection {
  url: string;
  db: Db;
  /** `ok` for an external server; the embedded server's supervision state otherwise (see EmbeddedPostgresHandle). */
  health(): string;
  /** The writes the server refused lately (read-only, out of disk), for readiness. */
  writeRefusals: WriteRefusals;
  /** The pool's connections now, for the metrics. */
  poolUse(): PoolUse;
  close(): Promise<void>;
}

/** The gateway pool's connections (pg.Pool's counts) and its size. */
export interface PoolUse { total: number; idle: number; waiting: number; max: number }

export interface ConnectOptions {
  /** A long-running server watches the embedded Postgres and restarts it; one-shot commands do not. */
  supervise?: boolean;
}

/** Connects to DATABASE_URL, or starts the embedded Postgres under DATA_DIR; then applies migrations. */
export async function connectDatabase(config: Readonly<Config>, logger: Logger, options: ConnectOptions = {}): Promise<DatabaseConnection> {
  let embedded: EmbeddedPostgresHandle | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir, port: config.embeddedPostgresPort, logger: logger.child({ component: 'postgres' }), supervise: options.supervise,
    });
    url = embedded.url;
  } else {
    // An external URL may lead through a pooler; the embedded server is always reached directly.
    await assertSessionConnections(url);
  }
  const { db, pool, writeRefusals } = createDatabase(url, config.databasePool);
  try {
    const applied = await migrateToLatest(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  } catch (error) {
    await db.destroy();
    await embedded?.stop();
    throw error;
  }
  return {
    url,
    db,
    health: () => embedded?.health() ?? 'ok',
    writeRefusals,
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: config.databasePool.size }),
    async close() {
      await db.destroy();
      await embedded?.stop();
    },
  };
}
