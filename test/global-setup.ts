import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/db/embedded-postgres.ts';
import { freePort } from './helpers/gateway.ts';

let embedded: EmbeddedPostgresHandle | undefined;
let dataDir: string | undefined;

/**
 * Integration tests need a Postgres server on which each test creates its own database.
 * TEST_DATABASE_URL points at an external one (CI also runs the suite on 127.0.0.1:5432);
 * otherwise one embedded server serves the whole run. Its data lives under the system temp directory:
 * as root, Postgres runs as the `postgres` user, which must be able to reach the directory, and a
 * checkout under a private home directory would not let it. Each run has its own directory and port,
 * so that runs side by side (several test files run by hand) never stop each other's server.
 */
export async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  dataDir = path.join(os.tmpdir(), `agentgate-test-postgres-${process.getuid?.() ?? 'user'}-${process.pid}`);
  embedded = await startEmbeddedPostgres({
    dataDir,
    port: Number(process.env.TEST_EMBEDDED_PG_PORT ?? await freePort()),
    logger: pino({ level: 'warn' }),
    // Three test files run at once, some with three server processes of up to 41 connections each.
    maxConnections: 400,
  });
  process.env.TEST_DATABASE_URL = embedded.url;
}

export async function globalTeardown(): Promise<void> {
  await embedded?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
