import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { credentialKey } from '../auth/caller.ts';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { tooManyRequests } from '../errors.ts';
import { countHit } from './fixed-window.ts';

const WINDOW_SECONDS = 60;
/** Plans scale the base per-minute limit; a tenant or a key may set its own. */
const PLAN_MULTIPLIER: Record<string, number> = { free: 1, pro: 5, enterprise: 20 };

/**
 * Per-credential fixed window (spec 8): one minute, counted in Postgres. No burst allowance on top:
 * all of the minute's requests may arrive at once, none beyond them. Every response carries the
 * X-RateLimit-* headers; the 61st request answers 429 with Retry-After.
 */
export function installRateLimit(app: FastifyInstance, deps: Deps): void {
  app.addHook('preHandler', async (request, reply) => {
    if (!request.caller || request.caller.authMethod === 'development' || request.routeOptions.config.ownRateLimit) return;
    const limit = await limitFor(deps, request.caller.tenantId, request.caller.apiKeyId);
    const window = await countHit(deps.db, `rate:${credentialKey(request.caller)}`, WINDOW_SECONDS);
    reply.headers({
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - window.count)),
      'x-ratelimit-reset': String(window.resetAt),
    });
    if (window.count > limit) throw tooManyRequests(Math.max(1, window.resetAt - Math.floor(Date.now() / 1000)));
  });
}

async function limitFor(deps: Deps, tenantId: string, apiKeyId: string | undefined): Promise<number> {
  const { rows } = await sql<{ key_limit: number | null; tenant_limit: number | null; plan: string }>`
    select k.rate_limit_per_minute as key_limit, t.rate_limit_per_minute as tenant_limit, t.plan
    from tenants t left join api_keys k on k.id = ${apiKeyId ?? null}::uuid
    where t.id = ${tenantId}`.execute(deps.db);
  const row = rows[0];
  return row?.key_limit ?? tenantRateLimit(deps.config, { rate_limit_per_minute: row?.tenant_limit ?? null, plan: row?.plan ?? 'free' });
}

/** A tenant's per-minute limit: its own when an operator set one, else its plan's. Keys may only go below it. */
export function tenantRateLimit(config: Readonly<Config>, tenant: { rate_limit_per_minute: number | null; plan: string }): number {
  return tenant.rate_limit_per_minute ?? config.auth.rateLimitPerMinute * (PLAN_MULTIPLIER[tenant.plan] ?? 1);
}
