import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { tooManyRequests } from '../errors.ts';
import { countHits, secondsUntilReset } from './fixed-window.ts';

/** Requests are counted per credential in windows of a minute. */
export const RATE_WINDOW_SECONDS = 60;
/** Plans scale the base per-minute limit; a tenant or a key may set its own. */
const PLAN_MULTIPLIER: Record<string, number> = { free: 1, pro: 5, enterprise: 20 };

/**
 * Per-credential fixed window (spec 8): one minute, counted in Postgres, with a burst allowance: at most a
 * third of the minute's requests in any one second (20/s at the default 60/min, as spec 8 puts it), so a
 * client cannot spend its whole minute in one instant. Every response carries the X-RateLimit-* headers of
 * the minute window; a refusal answers 429 with Retry-After.
 */
export interface RateLimited {
  /** Who is counted: one key per credential. */
  key: string;
  tenantId: string;
  apiKeyId?: string;
}

/** `limitedAs` names whom a request is counted against; undefined exempts it (no credential, development mode). */
export function installRateLimit(app: FastifyInstance, deps: Deps, limitedAs: (request: FastifyRequest) => RateLimited | undefined): void {
  app.addHook('preHandler', async (request, reply) => {
    const subject = request.routeOptions.config.ownRateLimit ? undefined : limitedAs(request);
    if (!subject) return;
    const limit = await limitFor(deps, subject.tenantId, subject.apiKeyId);
    const { key } = subject;
    const [minute, second] = await countHits(deps.db, [{ key: rateKey(key), windowSeconds: RATE_WINDOW_SECONDS }, { key: `burst:${key}`, windowSeconds: 1 }]);
    reply.headers({
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - minute.count)),
      'x-ratelimit-reset': String(minute.resetAt),
    });
    if (minute.count > limit) throw tooManyRequests(secondsUntilReset(minute));
    const burst = burstPerSecond(limit);
    if (second.count > burst) throw tooManyRequests(1, `Rate limit exceeded: at most ${burst} requests per second`);
  });
}

/** The per-minute window a credential's requests are counted in. */
export const rateKey = (credential: string) => `rate:${credential}`;

export const burstPerSecond = (perMinute: number) => Math.ceil(perMinute / 3);

/** Requests per minute for a key (its own limit), else for the tenant. */
export async function limitFor(deps: Deps, tenantId: string, apiKeyId: string | undefined): Promise<number> {
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
