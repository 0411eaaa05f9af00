import path from 'node:path';
import { pino } from 'pino';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/db/embedded-postgres.ts';

let embedded: EmbeddedPostgresHandle | undefined;

/**
 * Integration tests need a Postgres server on which each test creates its own database.
 * TEST_DATABASE_URL points at an external one (CI also runs the suite on 127.0.0.1:5432);
 * otherwise one embedded server under .test-data/ serves the whole run.
 */
export async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  embedded = await startEmbeddedPostgres({
    dataDir: path.resolve('.test-data'),
    port: Number(process.env.TEST_EMBEDDED_PG_PORT ?? 54339),
    logger: pino({ level: 'warn' }),
  });
  process.env.TEST_DATABASE_URL = embedded.url;
}

export async function globalTeardown(): Promise<void> {
  await embedded?.stop();
}
