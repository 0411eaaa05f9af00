import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { createDatabase, type Db } from './database.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.ts';
import { migrateToLatest } from './migrate.ts';

export interface DatabaseConnection {
  url: string;
  db: Db;
  close(): Promise<void>;
}

/** Connects to DATABASE_URL, or starts the embedded Postgres under DATA_DIR; then applies migrations. */
export async function connectDatabase(config: Readonly<Config>, logger: Logger): Promise<DatabaseConnection> {
  let embedded: EmbeddedPostgresHandle | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger: logger.child({ component: 'postgres' }) });
    url = embedded.url;
    logger.info({ data_dir: config.dataDir, port: config.embeddedPostgresPort }, 'embedded postgres ready');
  }
  const { db } = createDatabase(url, config.databasePoolSize);
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
    async close() {
      await db.destroy();
      await embedded?.stop();
    },
  };
}
