import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/db/embedded-postgres.ts';
import { freePort } from './helpers/gateway.ts';
import { createTemplateDatabase, dropTemplateDatabase } from './helpers/template-database.ts';

let embedded: EmbeddedPostgresHandle | undefined;
let dataDir: string | undefined;
let template: { adminUrl: string; name: string } | undefined;

/**
 * Integration tests need a Postgres server on which each test creates its own database.
 * TEST_DATABASE_URL points at an external one (CI also runs the suite on 127.0.0.1:5432);
 * otherwise one embedded server serves the whole run. Its data lives under the system temp directory:
 * as root, Postgres runs as the `postgres` user, which must be able to reach the directory, and a
 * checkout under a private home directory would not let it. Each run has its own directory and port,
 * so that runs side by side (several test files run by hand) never stop each other's server.
 * On either server, a migrated template database is made once for the run (see template-database.ts).
 */
export async function globalSetup(): Promise<void> {
  // Test files and the servers they start compile the same modules over and over: Node keeps the result here
  // (each entry is checked against its source, so a stale one is simply redone). The test processes inherit it.
  process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'agentgate-test-compile-cache');
  if (!process.env.TEST_DATABASE_URL) await startTestPostgres();
  const adminUrl = process.env.TEST_DATABASE_URL!;
  template = { adminUrl, name: await createTemplateDatabase(adminUrl) };
  process.env.TEST_TEMPLATE_DATABASE = template.name;
}

async function startTestPostgres(): Promise<void> {
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
  if (template) await dropTemplateDatabase(template.adminUrl, template.name);
  await embedded?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
