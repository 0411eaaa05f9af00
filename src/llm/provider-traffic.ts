import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { CatalogModel, ProviderSpec } from './model-catalog.ts';

export type ProviderTrafficSettings = {
  /** The window the catalogue's per-minute limits are counted in (60 s; tests shorten it, the limits scale with it). */
  windowMs: number;
  /** The share of a deployment's limits one tenant may use in a window (0–1]. */
  tenantShare: number;
  /** The longest a call waits in place for capacity before it fails. */
  maxWaitMs: number;
  /** Consecutive transient failures of a deployment that put it in cooldown. */
  cooldownFailures: number;
  cooldownMs: number;
  /** Retries of one deployment for transient failures before the next candidate is tried. */
  retries: number;
};

export type CapacityRequest = { model: CatalogModel; tenantId?: string; inputTokens: number; signal?: AbortSignal };

/**
 * What stands between the workers and each provider deployment: its request and token limits, counted in Postgres
 * so every process shares them, and its cooldown after repeated failures (per process: see docs/decisions.md).
 */
export type ProviderTraffic = {
  readonly settings: ProviderTrafficSettings;
  /** Waits until the deployment (and the tenant's share of it) has room for the call, then counts it. */
  takeCapacity(request: CapacityRequest): Promise<void>;
  /** Candidates in the order to try: deployments in cooldown last, peers of one priority by headroom. */
  order<T extends { catalogModel: CatalogModel }>(candidates: T[]): Promise<T[]>;
  isCoolingDown(provider: string): boolean;
  recordFailure(provider: string): void;
  recordSuccess(provider: string): void;
};

type Limit = { key: string; limit: number; amount: number };

export function createProviderTraffic(db: Db | undefined, providers: readonly ProviderSpec[], settings: ProviderTrafficSettings): ProviderTraffic {
  const byName = new Map(providers.map((provider) => [provider.name, provider]));
  const failures = new Map<string, { consecutive: number; until: number }>();
  const scale = settings.windowMs / 60_000;
  const perWindow = (perMinute: number, share = 1) => Math.max(1, Math.floor(perMinute * scale * share));

  const limitsOf = ({ model, tenantId, inputTokens }: CapacityRequest): Limit[] => {
    const provider = byName.get(model.provider);
    const limits: Limit[] = [];
    const add = (name: string, perMinute: number | undefined, amount: number) => {
      if (perMinute === undefined) return;
      limits.push({ key: `${model.provider}:${name}`, limit: perWindow(perMinute), amount });
      if (tenantId !== undefined && settings.tenantShare < 1) {
        limits.push({ key: `${model.provider}:${name}:${tenantId}`, limit: perWindow(perMinute, settings.tenantShare), amount });
      }
    };
    add('rpm', provider?.rpm, 1);
    add('tpm', provider?.tpm, Math.max(1, inputTokens));
    return limits;
  };

  let turn = 0;
  // Callers of this process waiting for the same limits, in line: only the first asks the database, the others wait
  // behind it. Without the line every waiter polled Postgres at each freed moment, and the one that won it came late.
  const lines = new Map<string, Promise<void>>();

  const waitForRoom = async (db: Db, limits: Limit[], request: CapacityRequest, startedAt: number) => {
    for (;;) {
      request.signal?.throwIfAborted();
      const waitMs = await tryTake(db, limits, settings.windowMs);
      if (waitMs === 0) return;
      if (Date.now() - startedAt + waitMs > settings.maxWaitMs) {
        throw new Error(`provider ${request.model.provider} has no capacity within ${Math.round(settings.maxWaitMs / 1000)} s (PROVIDER_MAX_WAIT_SECONDS)`);
      }
      await sleep(waitMs, undefined, { signal: request.signal });
    }
  };
  const isCoolingDown = (provider: string) => (failures.get(provider)?.until ?? 0) > Date.now();

  return Object.freeze({
    settings,
    async takeCapacity(request) {
      const limits = limitsOf(request);
      if (limits.length === 0 || db === undefined) return;
      const startedAt = Date.now();
      const line = limits.map(({ key }) => key).join(' ');
      const taking = inLine(lines.get(line), request.signal).then(() => waitForRoom(db, limits, request, startedAt));
      const tail = taking.catch(() => {});
      lines.set(line, tail);
      try {
        await taking;
      } finally {
        if (lines.get(line) === tail) lines.delete(line);
      }
    },
    async order(candidates) {
      const headroom = await headroomOf(db, settings.windowMs, candidates.map(({ catalogModel }) => catalogModel), limitsOf);
      // Limited peers with as much room as each other (none booked, the usual case below the limits) take turns;
      // deployments without limits keep the catalogue's order.
      turn += 1;
      return candidates
        .map((candidate, index) => {
          const room = headroom.get(candidate.catalogModel.provider);
          return { candidate, model: candidate.catalogModel, room: room ?? 1, tiebreak: room === undefined ? index : (index + turn) % candidates.length };
        })
        .toSorted((left, right) =>
          Number(isCoolingDown(left.model.provider)) - Number(isCoolingDown(right.model.provider))
          || left.model.priority - right.model.priority
          || right.room - left.room
          || left.tiebreak - right.tiebreak)
        .map(({ candidate }) => candidate);
    },
    isCoolingDown,
    recordFailure(provider) {
      const state = failures.get(provider) ?? { consecutive: 0, until: 0 };
      state.consecutive += 1;
      if (state.consecutive >= settings.cooldownFailures) {
        state.until = Date.now() + settings.cooldownMs;
        state.consecutive = 0;
      }
      failures.set(provider, state);
    },
    recordSuccess(provider) {
      failures.delete(provider);
    },
  });
}

/** Waits for the callers ahead to take their capacity (or give up); a call cancelled meanwhile leaves the line at once. */
function inLine(ahead: Promise<void> | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (ahead === undefined) return Promise.resolve();
  if (signal === undefined) return ahead;
  signal.throwIfAborted();
  return Promise.race([ahead, new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))]);
}

class Refused extends Error {
  readonly waitMs: number;

  constructor(waitMs: number) {
    super('no capacity');
    this.waitMs = waitMs;
  }
}

/**
 * Counts the call against every limit in one transaction, or none when one refuses; 0 when it fits, else how long
 * until the refusing limit has room. Each limit paces its calls evenly (GCRA: a call of `amount` moves the key's next
 * free moment on by amount × window / limit), so no stretch of one window ever holds more than the limit, whichever
 * way a provider counts its windows. The database's clock is the one every process shares.
 */
async function tryTake(db: Db, limits: Limit[], windowMs: number): Promise<number> {
  try {
    await db.transaction().execute(async (transaction) => {
      for (const { key, limit, amount } of limits) {
        const costMs = (amount * windowMs) / limit;
        const { rows } = await sql<{ wait_ms: number }>`
          with clock as (select extract(epoch from clock_timestamp()) * 1000 as now_ms)
          insert into provider_rate_windows as w (key, next_free_ms)
          select ${key}, now_ms + ${costMs}::float8 from clock
          on conflict (key) do update set next_free_ms = greatest(w.next_free_ms, excluded.next_free_ms - ${costMs}::float8) + ${costMs}::float8
          where w.next_free_ms <= (select now_ms from clock)
          returning 0 as wait_ms`.execute(transaction);
        if (rows.length === 0) {
          const { rows: [row] } = await sql<{ wait_ms: number }>`
            select next_free_ms - extract(epoch from clock_timestamp()) * 1000 as wait_ms from provider_rate_windows where key = ${key}`.execute(transaction);
          throw new Refused(Number(row?.wait_ms ?? 1));
        }
      }
    });
    return 0;
  } catch (error) {
    if (error instanceof Refused) return Math.max(1, Math.ceil(error.waitMs));
    throw error;
  }
}

/** How little of each provider's request pacing is booked ahead, as a share of a window (1: none; a provider without limits is absent). */
async function headroomOf(db: Db | undefined, windowMs: number, models: CatalogModel[], limitsOf: (request: CapacityRequest) => Limit[]): Promise<Map<string, number>> {
  const headroom = new Map<string, number>();
  const limits = models.flatMap((model) => limitsOf({ model, inputTokens: 1 }).filter(({ key }) => key.endsWith(':rpm')).map((limit) => ({ ...limit, provider: model.provider })));
  if (db === undefined || limits.length === 0 || new Set(models.map(({ priority }) => priority)).size === models.length) return headroom;
  const { rows } = await sql<{ key: string; booked_ms: number }>`
    select key, greatest(0, next_free_ms - extract(epoch from clock_timestamp()) * 1000) as booked_ms
    from provider_rate_windows where key = any(${limits.map(({ key }) => key)})`.execute(db);
  for (const limit of limits) {
    const row = rows.find(({ key }) => key === limit.key);
    headroom.set(limit.provider, 1 - (row ? Number(row.booked_ms) : 0) / windowMs);
  }
  return headroom;
}
