import PQueue from 'p-queue';

export interface TurnLimits {
  /** Sandboxes in use at once. */
  max: number;
  /** Of those, the most one tenant may hold. */
  perTenant: number;
  /** A call that waited this long for its turn gives up. */
  waitTimeoutMs: number;
}

export interface SandboxTurns {
  /**
   * Runs `use` once the tenant's turn comes, and holds the turn until `use` settles. A call whose `signal`
   * aborts while it waits leaves the queue and rejects with the signal's reason; one that waits longer than
   * the limit rejects saying so. Once `use` runs, only `use` answers for the signal.
   */
  take<T>(tenantId: string, signal: AbortSignal, use: () => Promise<T>): Promise<T>;
  /** Turns held now, and calls waiting for one. */
  counts(): { inUse: number; waiting: number };
}

/**
 * Turns for sandboxes, fair between tenants: each tenant's calls wait in a queue of their own, and one joins
 * the shared queue only while its tenant holds fewer than `perTenant` turns (queued or running). When a
 * turn frees, the longest-waiting call of the shared queue takes it, and its tenant's next call joins at the
 * back: the tenants that wait take turns, so one tenant's long queue puts at most one of its calls ahead of
 * another tenant's.
 */
export function createSandboxTurns(limits: TurnLimits): SandboxTurns {
  const shared = new PQueue({ concurrency: limits.max });
  const tenants = new Map<string, PQueue>();
  return {
    async take(tenantId, signal, use) {
      signal.throwIfAborted();
      const own = tenants.get(tenantId) ?? new PQueue({ concurrency: limits.perTenant });
      tenants.set(tenantId, own);
      const waiting = waitForTurn(signal, limits);
      try {
        return await own.add(() => shared.add(() => {
          waiting.end();
          return use();
        }, { signal: waiting.signal }), { signal: waiting.signal });
      } finally {
        waiting.end();
        if (own.size === 0 && own.pending === 0 && tenants.get(tenantId) === own) tenants.delete(tenantId);
      }
    },
    counts() {
      const waitingOwn = [...tenants.values()].reduce((total, queue) => total + queue.size, 0);
      return { inUse: shared.pending, waiting: shared.size + waitingOwn };
    },
  };
}

/**
 * A signal for the wait alone: it aborts when the caller's does or at the wait limit, but never once `end` is
 * called (when the turn comes): the queue would otherwise free the turn of a call still running.
 */
function waitForTurn(signal: AbortSignal, limits: TurnLimits) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new Error(
    `no Python sandbox was free within ${limits.waitTimeoutMs / 1000} s (at most ${limits.max} run at once, ${limits.perTenant} for one tenant); try again later`,
  )), limits.waitTimeoutMs);
  return {
    signal: controller.signal,
    end() {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}
