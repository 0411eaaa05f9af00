import type { Deps } from '../deps.ts';
import { countExecutorStates, renewLease, type ExecutorIdentity } from '../engine/executors.ts';
import { backgroundErrors, executorHeartbeats, executors } from '../observability/metrics.ts';
import { recoverDeadExecutors } from './hand-over-workflows.ts';

export interface ExecutorLease {
  /** How often `beat` should run: a few times per EXECUTOR_DEAD_AFTER_SECONDS, so one late beat never looks dead. */
  intervalMs: number;
  /** Renews the lease; then, in a process that recovers others' work, judges the others (issue 26). */
  beat(): Promise<void>;
  /**
   * True while no other process can have taken this one over: less than half of EXECUTOR_DEAD_AFTER_SECONDS has
   * passed since a renewal that succeeded was sent. A take-over needs the lease unrenewed for the whole period
   * (takeOverIfDead), counted from that renewal's `now()`, which is later than its sending. Elapsed time is read from
   * both the monotonic and the wall clock, the larger counting: the first runs on through a frozen process, the
   * second through a suspended machine.
   */
  isCertain(): boolean;
}

export interface LeaseOptions {
  /** Worker and `all` processes take dead executors' work over; a gateway-only process runs none. */
  judgesOthers: boolean;
  /** Called when the lease is found taken over: whatever runs here must stop at once. */
  onFenced(): void;
}

/**
 * This process's executor lease. After an outage every lease is equally stale, and whoever came back first would
 * take the others over. So a process judges others only right after renewing its own lease, and only once it has
 * held that lease without a failed renewal, or one half a period late, for a whole EXECUTOR_DEAD_AFTER_SECONDS: an executor it then
 * finds dead stayed silent for that long while the database answered this process, which is not an outage they
 * shared. Meanwhile every live process renews. Start-up counts as a late renewal: a new process has not watched
 * the others for a whole period yet.
 */
export function createExecutorLease(deps: Deps, identity: ExecutorIdentity, options: LeaseOptions): ExecutorLease {
  const deadAfterMs = deps.config.executorDeadAfterSeconds * 1000;
  const intervalMs = Math.max(500, Math.floor(deadAfterMs / 6));
  let lastRenewedAt = performance.now();
  let troubleAt = lastRenewedAt;
  let judging = false;
  let renewalSent: ClockReading | undefined;

  const judge = () => {
    if (judging) return;
    judging = true;
    recoverDeadExecutors(deps, identity.id)
      .catch((error: unknown) => {
        backgroundErrors.inc({ source: 'dead executor recovery' });
        deps.logger.error({ err: error }, 'dead executor recovery failed');
      })
      .finally(() => { judging = false; });
  };

  return {
    intervalMs,
    isCertain: () => isLeaseCertain(renewalSent, { monotonic: performance.now(), wall: Date.now() }, deadAfterMs),
    async beat() {
      const sent = { monotonic: performance.now(), wall: Date.now() };
      const renewed = await renewLease(deps.db, identity).catch((error: unknown) => {
        executorHeartbeats.inc({ outcome: 'failed' });
        troubleAt = performance.now();
        throw error;
      });
      if (!renewed) {
        renewalSent = undefined;
        executorHeartbeats.inc({ outcome: 'failed' });
        options.onFenced();
        return;
      }
      renewalSent = sent;
      const now = performance.now();
      // A renewal this late (the process or its database stalled) may have left the lease near its end.
      if (now - lastRenewedAt > deadAfterMs / 2) troubleAt = now;
      lastRenewedAt = now;
      if (options.judgesOthers && now - troubleAt >= deadAfterMs) judge();
      // The renewal is counted once the identities it saw are in the gauge: a scrape never sees one without the other.
      try {
        const states = await countExecutorStates(deps.db, deps.config.executorDeadAfterSeconds);
        for (const [state, count] of Object.entries(states)) executors.set({ state }, count);
      } finally {
        executorHeartbeats.inc({ outcome: 'ok' });
      }
    },
  };
}

export interface ClockReading { monotonic: number; wall: number }

/** ExecutorLease.isCertain at `now`, for the last renewal that succeeded, sent at `sent`. */
export function isLeaseCertain(sent: ClockReading | undefined, now: ClockReading, deadAfterMs: number): boolean {
  if (sent === undefined) return false;
  return Math.max(now.monotonic - sent.monotonic, now.wall - sent.wall) < deadAfterMs / 2;
}
