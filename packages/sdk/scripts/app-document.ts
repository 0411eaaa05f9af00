import { pino } from 'pino';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Deps } from '../../../src/deps.ts';

/**
 * The OpenAPI document the server would serve, built in memory (no database, no listening socket): the routes
 * and schemas do not depend on either.
 */
export async function openApiDocumentOfApp(): Promise<{ paths: Record<string, Record<string, unknown>> }> {
  const deps = {
    config: loadConfig({}, 'all'), logger: pino({ level: 'silent' }), policy: { mode: 'off', rules: [] },
    stopping: new AbortController().signal, databaseHealth: () => 'ok',
  } as unknown as Deps;
  const app = await buildApp(deps);
  await app.ready();
  const document = app.swagger() as { paths: Record<string, Record<string, unknown>> };
  await app.close();
  return document;
}
