import { pino } from 'pino';
import { buildApp, type RegisteredRoute } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Deps } from '../../../src/deps.ts';

type OpenApiDocument = { paths: Record<string, Record<string, unknown>> };

/**
 * The OpenAPI document the server would serve and the routes it registers, built in memory (no database, no
 * listening socket): the routes and schemas do not depend on either.
 */
export async function inMemoryApp(): Promise<{ document: OpenApiDocument; routes: ReadonlyArray<RegisteredRoute> }> {
  const deps = {
    config: loadConfig({}, 'all'), logger: pino({ level: 'silent' }), policy: { mode: 'off', rules: [] },
    stopping: new AbortController().signal, databaseHealth: () => 'ok',
  } as unknown as Deps;
  const app = await buildApp(deps);
  await app.ready();
  const document = app.swagger() as OpenApiDocument;
  await app.close();
  return { document, routes: app.registeredRoutes };
}

export async function openApiDocumentOfApp(): Promise<OpenApiDocument> {
  return (await inMemoryApp()).document;
}
