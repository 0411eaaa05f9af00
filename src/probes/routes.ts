import { sql } from 'kysely';
import pTimeout from 'p-timeout';
import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { checkWritable } from '../db/write-refusals.ts';
import { isEngineHealthy } from '../engine/engine.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { createMetricsAccessCheck } from './metrics-access.ts';
import { describeSkillHealth } from '../skills/skill-health.ts';

const HealthBody = Type.Object({
  status: Type.String(),
  version: Type.String(),
  time: Type.String(),
  checks: Type.Record(Type.String(), Type.String()),
});

/** Probes (spec 4.1): no authentication. */
export async function probeRoutes(app: App, deps: Deps) {
  // Liveness: the process answers, and the database it supervises (the embedded server) runs or is being
  // restarted. A restart that failed makes it unhealthy, so an orchestrator replaces the process.
  app.get('/health', {
    config: { public: true },
    schema: { tags: ['probes'], summary: 'Liveness', response: { 200: HealthBody, 503: HealthBody } },
  }, async (_request, reply) => {
    const postgres = deps.databaseHealth();
    const healthy = !postgres.startsWith('failing');
    reply.status(healthy ? 200 : 503);
    return {
      status: healthy ? 'healthy' : 'unhealthy',
      version: deps.config.version,
      time: new Date().toISOString(),
      checks: { process: 'ok', postgres },
    };
  });

  // With a listener of its own (METRICS_PORT), /metrics is served there only (metrics-listener.ts).
  if (deps.config.metrics.port === undefined) metricsRoute(app, deps, { onOwnListener: false });

  app.get('/readiness', {
    config: { public: true },
    schema: { tags: ['probes'], summary: 'Readiness: database, engine and model provider; skill files that did not load are named without failing it', response: { 200: HealthBody, 503: HealthBody } },
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

/** GET /metrics in the Prometheus text format, behind its own access check (not the API's authentication). */
export function metricsRoute(app: App, deps: Deps, options: { onOwnListener: boolean }): void {
  app.get('/metrics', {
    config: { public: true },
    schema: { tags: ['probes'], summary: 'Prometheus metrics', response: { 200: { type: 'string' }, 401: ErrorBody, 403: ErrorBody } },
    onRequest: createMetricsAccessCheck({ settings: deps.config.metrics, environment: deps.config.environment, onOwnListener: options.onOwnListener }),
  }, async (_request, reply) => {
    reply.type(deps.metrics.contentType);
    return deps.metrics.render();
  });
}

async function readinessChecks(deps: Deps): Promise<Record<string, string>> {
  // From the first moment of a shutdown, load balancers are to send new work elsewhere.
  if (deps.stopping.aborted) return { shutdown: 'failing: shutting down; draining the work in flight' };
  const [database, writes, engine] = await Promise.all([
    probe(async () => { await sql`select 1`.execute(deps.db); }),
    probe(() => checkWrites(deps)),
    probe(async () => { if (!await isEngineHealthy()) throw new Error('not launched'); }),
  ]);
  const models = await probe(async () => { deps.models.resolveCandidates({}); });
  return { database, writes, engine, models: models === 'ok' ? `ok: ${deps.models.describe()}` : models, skills: describeSkillHealth(deps.skills) };
}

/**
 * A process whose writes fail cannot take work, even when every read answers. The probe sees a read-only server
 * (a standby, a storage-full switch) at once; a server out of disk refuses only the writes that need new space,
 * so the refusals this process met lately count too.
 */
async function checkWrites(deps: Deps): Promise<void> {
  const refused = deps.writeRefusals.recent(WRITE_REFUSAL_MEMORY_MS);
  if (refused !== undefined) throw new Error(`the database refused a write within the last ${WRITE_REFUSAL_MEMORY_MS / 1000} s: ${refused}`);
  await checkWritable(deps.db);
}

/** How long a refused write keeps readiness at 503: longer than the pauses between the retries of waiting work. */
const WRITE_REFUSAL_MEMORY_MS = 5_000;

/** Each check answers within this, so the probe answers in time even when the database is frozen. */
const CHECK_TIMEOUT_MS = 1_500;

async function probe(check: () => Promise<void>): Promise<string> {
  try {
    await pTimeout(check(), { milliseconds: CHECK_TIMEOUT_MS, message: `no answer within ${CHECK_TIMEOUT_MS} ms` });
    return 'ok';
  } catch (error) {
    return `failing: ${error instanceof Error ? error.message : String(error)}`;
  }
}
