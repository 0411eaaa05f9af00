import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { claimGrant, grantParkedCalls, holdPlace, leaveInPlace, takeDirect, CapacityWaitError, type Limit, type QueuedCall } from './capacity-queue.ts';
import type { LimitIdentity } from './limit-identity.ts';
import type { CatalogModel, ProviderSpec } from './model-catalog.ts';

export type ProviderTrafficSettings = {
  /** The window the catalogue's per-minute limits are counted in (60 s; tests shorten it, the limits scale with it). */
  windowMs: number;
  /** The share of a deployment's limits one tenant may use in a window (0–1] while another tenant waits for it. */
  tenantShare: number;
  /** The longest a call waits in place for capacity before it fails. */
  maxWaitMs: number;
  /** A task's call that would wait longer than this for capacity parks its task instead (capacity-queue.ts). */
  parkAfterMs: number;
  /** Consecutive transient failures of a deployment that put it in cooldown. */
  cooldownFailures: number;
  cooldownMs: number;
  /** Retries of one deployment for transient failures before the next candidate is tried. */
  retries: number;
  /** A provider request that sends nothing for this long (no answer, or a stream gone quiet) is given up as timed out. */
  stallMs: number;
  /**
   * How long after its first failure a task's call whose every candidate failed for a passing reason is still tried
   * again (its task parked in between) instead of failing its task; 0: it fails at once.
   */
  outageWaitMs: number;
};

/** A call of a task, inside a step of its workflow: it may park for capacity, and `callKey` finds its grant after the wake. */
export type CapacityWaiter = { callKey: string };

export type CapacityRequest = {
  model: CatalogModel; tenantId?: string; inputTokens: number; signal?: AbortSignal; waiter?: CapacityWaiter;
  /** The call is sent again after the provider refused or failed it: it had its turn, so it goes before parked calls. */
  again?: boolean;
};

/**
 * What stands between the workers and each provider deployment: its request and token limits, counted in Postgres
 * so every process shares them, the queue of tasks parked for them, and its cooldown after repeated failures (per
 * process: see docs/decisions.md).
 */
export type ProviderTraffic = {
  readonly settings: ProviderTrafficSettings;
  /**
   * Waits until the deployment (and, while another tenant waits, the tenant's share of it) has room for the call,
   * then counts it. A waiter's call that would wait longer than `parkAfterMs`, or find parked calls ahead of it,
   * throws CapacityWaitError instead: its task parks; woken, the same call finds the capacity granted to it.
   */
  takeCapacity(request: CapacityRequest): Promise<void>;
  /** Grants parked calls their capacity in turn and wakes their tasks, while any wait; one loop per process at a time. */
  grantParked(wake: (taskId: string) => Promise<void>, stop?: AbortSignal): Promise<void>;
  /** Candidates in the order to try: deployments in cooldown last, peers of one priority by headroom. */
  order<T extends { catalogModel: CatalogModel }>(candidates: T[]): Promise<T[]>;
  isCoolingDown(provider: string): boolean;
  /** How long the deployment's cooldown has left in this process: 0 when it is not cooling down. */
  cooldownLeftMs(provider: string): number;
  recordFailure(provider: string): void;
  recordSuccess(provider: string): void;
};

/** `identities`: each provider's limit identity (limit-identity.ts); by default its own name and limits. */
export function createProviderTraffic(
  db: Db | undefined, providers: readonly ProviderSpec[], settings: ProviderTrafficSettings, identities?: Map<string, LimitIdentity>,
): ProviderTraffic {
  const byName = new Map(providers.map((provider) => [provider.name, identities?.get(provider.name) ?? { id: provider.name, rpm: provider.rpm, tpm: provider.tpm }]));
  const failures = new Map<string, { consecutive: number; until: number }>();
  const scale = settings.windowMs / 60_000;
  const perWindow = (perMinute: number, share = 1) => Math.max(1, Math.floor(perMinute * scale * share));

  const queuedCallOf = ({ model, tenantId, inputTokens }: Omit<CapacityRequest, 'signal'>): QueuedCall => {
    const identity = byName.get(model.provider) ?? { id: model.provider };
    const limits: Limit[] = [];
    const add = (name: string, perMinute: number | undefined, amount: number) => {
      if (perMinute === undefined) return;
      limits.push({ key: `${identity.id}:${name}`, limit: perWindow(perMinute), amount, tenant: false });
      if (tenantId !== undefined && settings.tenantShare < 1) {
        limits.push({ key: `${identity.id}:${name}:${tenantId}`, limit: perWindow(perMinute, settings.tenantShare), amount, tenant: true });
      }
    };
    add('rpm', identity.rpm, 1);
    add('tpm', identity.tpm, Math.max(1, inputTokens));
    return { limitId: identity.id, provider: model.provider, ...(tenantId === undefined ? {} : { tenantId }), limits };
  };
  const limitsOf = (request: Omit<CapacityRequest, 'signal'>) => queuedCallOf(request).limits;

  let turn = 0;
  let granting: Promise<void> | undefined;
  const cooldownLeftMs = (provider: string) => Math.max(0, (failures.get(provider)?.until ?? 0) - Date.now());
  const isCoolingDown = (provider: string) => cooldownLeftMs(provider) > 0;

  // Callers of this process waiting for the same limits, in line: only the first asks the database, the others wait
  // behind it. Without the line every waiter polled Postgres at each freed moment, and the one that won it came late.
  const lines = new Map<string, Promise<void>>();
  // And they go out in that order: each waits from its booking's answer, and an answer that came late (a slow commit)
  // would otherwise let the caller behind it, which booked the next moment, go first.
  const departures = new Map<string, Promise<void>>();

  /** Takes the call's capacity, waiting for it in the database's count: how long until the moment it booked. */
  const waitInPlace = async (request: CapacityRequest, call: QueuedCall, database: Db, startedAt: number): Promise<number> => {
    let inPlace: number | undefined;
    try {
      for (;;) {
        const outcome = await takeDirect(database, call, settings.windowMs, { mayPark: request.waiter !== undefined && !request.again, seq: inPlace });
        if (outcome.kind === 'taken') return outcome.waitMs;
        const waitMs = outcome.kind === 'refused' ? outcome.waitMs : 0;
        const waited = Date.now() - startedAt + waitMs;
        if (request.waiter !== undefined && (outcome.kind === 'queued' || waited > settings.parkAfterMs)) {
          throw new CapacityWaitError(call, outcome.kind === 'queued' ? 'parked calls are ahead' : `no room within ${settings.parkAfterMs} ms`);
        }
        if (waited > settings.maxWaitMs) {
          throw new Error(`provider ${request.model.provider} has no capacity within ${Math.round(settings.maxWaitMs / 1000)} s (PROVIDER_MAX_WAIT_SECONDS)`);
        }
        // A little spread, so the callers that waited for the same moment do not all ask at once.
        const sleepMs = waitMs + Math.random() * Math.min(50, waitMs);
        inPlace = await holdPlace(database, call, inPlace, sleepMs);
        await sleep(sleepMs, undefined, { signal: request.signal });
      }
    } finally {
      if (inPlace !== undefined) await leaveInPlace(database, inPlace);
    }
  };

  return Object.freeze({
    settings,
    async takeCapacity(request) {
      const call = queuedCallOf(request);
      if (call.limits.length === 0 || db === undefined) return;
      const granted = request.waiter === undefined ? undefined : await claimGrant(db, request.waiter.callKey, call);
      if (granted !== undefined) return await sleep(granted, undefined, { signal: request.signal });
      // Time in line counts towards parking: a call that waited its turn past PROVIDER_PARK_AFTER_SECONDS parks at once.
      const startedAt = Date.now();
      const line = call.limits.map(({ key }) => key).join(' ');
      const taking = inLine(lines.get(line), request.signal).then(() => waitInPlace(request, call, db, startedAt));
      const tail = taking.then(() => undefined, () => undefined);
      lines.set(line, tail);
      const ahead = departures.get(line);
      const departed = Promise.withResolvers<void>();
      departures.set(line, departed.promise);
      try {
        const bookedInMs = await taking.finally(() => {
          if (lines.get(line) === tail) lines.delete(line);
        });
        // Out of the line: the next caller books the moment after this one while this one waits for its own.
        await sleep(bookedInMs, undefined, { signal: request.signal });
        await inLine(ahead, request.signal);
      } finally {
        departed.resolve();
        if (departures.get(line) === departed.promise) departures.delete(line);
      }
    },
    grantParked(wake, stop) {
      if (db === undefined) return Promise.resolve();
      granting ??= grantParkedCalls(db, settings.windowMs, settings.maxWaitMs, wake, stop).finally(() => { granting = undefined; });
      return granting;
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
    cooldownLeftMs,
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

/** Waits for the callers ahead to take their capacity (or park, or give up); a call cancelled meanwhile leaves the line at once. */
function inLine(ahead: Promise<void> | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (ahead === undefined) return Promise.resolve();
  if (signal === undefined) return ahead;
  signal.throwIfAborted();
  const aborted = Promise.withResolvers<never>();
  const onAbort = () => aborted.reject(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  // A task's signal lives through all its calls: each wait takes its listener off again.
  return Promise.race([ahead, aborted.promise]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** How little of each provider's request pacing is booked ahead, as a share of a window (1: none; a provider without limits is absent). */
async function headroomOf(db: Db | undefined, windowMs: number, models: CatalogModel[], limitsOf: (request: Omit<CapacityRequest, 'signal'>) => Limit[]): Promise<Map<string, number>> {
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
