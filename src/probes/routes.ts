import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { isEngineHealthy } from '../engine/engine.ts';
import type { App } from '../http/app-type.ts';

const HealthBody = Type.Object({
  status: Type.String(),
  version: Type.String(),
  time: Type.String(),
  checks: Type.Record(Type.String(), Type.String()),
});

/** Probes (spec 4.1): no authentication. */
export async function probeRoutes(app: App, deps: Deps) {
  app.get('/health', {
    config: { public: true },
    schema: { tags: ['probes'], summary: 'Liveness', response: { 200: HealthBody } },
  }, async () => ({
    status: 'healthy',
    version: deps.config.version,
    time: new Date().toISOString(),
    checks: { process: 'ok' },
  }));

  app.get('/readiness', {
    config: { public: true },
    schema: { tags: ['probes'], summary: 'Readiness: database, engine and model provider', response: { 200: HealthBody, 503: HealthBody } },
  }, async (_request, reply) => {
    const checks = await readinessChecks(deps);
    const failing = Object.entries(checks).filter(([, value]) => value.startsWith('failing'));
    reply.status(failing.length === 0 ? 200 : 503);
    return {
      status: failing.length === 0 ? 'ready' : `not ready: ${failing.map(([name]) => name).join(', ')}`,
      version: deps.config.version,
      time: new Date().toISOString(),
      checks,
    };
  });
}

async function readinessChecks(deps: Deps): Promise<Record<string, string>> {
  const [database, engine] = await Promise.all([
    probe(async () => { await sql`select 1`.execute(deps.db); }),
    probe(async () => { if (!await isEngineHealthy()) throw new Error('not launched'); }),
  ]);
  const models = await probe(async () => { deps.models.resolveCandidates({}); });
  return { database, engine, models: models === 'ok' ? `ok: ${deps.models.describe()}` : models };
}

async function probe(check: () => Promise<void>): Promise<string> {
  try {
    await check();
    return 'ok';
  } catch (error) {
    return `failing: ${error instanceof Error ? error.message : String(error)}`;
  }
}
