import type { PythonSettings } from '../../config.ts';
import { pythonSandboxCallsWaiting, pythonSandboxes, pythonSandboxWait } from '../../observability/metrics.ts';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.ts';
import { createSandboxTurns } from './sandbox-turns.ts';

interface Spare {
  sandbox: SandboxProcess;
  isReady: boolean;
}

export interface SandboxCounts {
  /** Held by a call: loading for it, or running its program. */
  running: number;
  spareLoading: number;
  spareReady: number;
  /** Calls waiting for their turn. */
  waiting: number;
}

export interface SandboxPool {
  /**
   * Runs `use` with a sandbox process of its own once the tenant's turn comes (sandbox-turns.ts), and kills
   * the process when `use` settles, before the turn goes to the next call: at most `maxSandboxes` programs
   * run at once, beside at most `warmSandboxes` idle spares.
   */
  withSandbox<T>(tenantId: string, signal: AbortSignal, use: (sandbox: SandboxProcess) => Promise<T>): Promise<T>;
  counts(): SandboxCounts;
  /** Kills every sandbox process; the pool starts no more. */
  close(): Promise<void>;
}

export function createSandboxPool(settings: Readonly<PythonSettings>): SandboxPool {
  const turns = createSandboxTurns({ max: settings.maxSandboxes, perTenant: settings.tenantSandboxes, waitTimeoutMs: settings.queueTimeoutMs });
  const spares: Spare[] = [];
  const runningByTenant = new Map<string, number>();
  const inUse = new Set<SandboxProcess>();
  let isClosed = false;

  /**
   * Keeps `warmSandboxes` spares, loading one at a time: two loads at once would each take longer, and the
   * first spare is what the next call waits for.
   */
  function refill(): void {
    if (isClosed || spares.length >= settings.warmSandboxes || spares.some((spare) => !spare.isReady)) return;
    const spare: Spare = { sandbox: startSandboxProcess(settings.memoryLimitMb), isReady: false };
    spare.sandbox.hold(false);
    spares.push(spare);
    spare.sandbox.ready.then(() => {
      spare.isReady = true;
      refill();
      publishCounts();
    }, () => {});
    // A spare that dies (it failed to load, or the system killed it) is simply not used.
    void spare.sandbox.exited.then(() => removeSpare(spare));
    publishCounts();
  }

  function removeSpare(spare: Spare): void {
    const index = spares.indexOf(spare);
    if (index >= 0) spares.splice(index, 1);
    publishCounts();
  }

  /**
   * A tenant's first sandbox takes a spare (a ready one, else one still loading); a tenant that already runs
   * one takes a spare only when more than one is ready, and otherwise starts a sandbox of its own: the last
   * ready spare stays for the next tenant to arrive, so a busy tenant cannot keep the others waiting on loads.
   */
  function takeSandbox(tenantIsBusy: boolean): SandboxProcess {
    const ready = spares.filter((spare) => spare.isReady);
    const chosen = tenantIsBusy ? (ready.length > 1 ? ready[0] : undefined) : (ready[0] ?? spares[0]);
    if (!chosen) return startSandboxProcess(settings.memoryLimitMb);
    removeSpare(chosen);
    return chosen.sandbox;
  }

  async function useSandbox<T>(tenantId: string, use: (sandbox: SandboxProcess) => Promise<T>): Promise<T> {
    const running = runningByTenant.get(tenantId) ?? 0;
    runningByTenant.set(tenantId, running + 1);
    const sandbox = takeSandbox(running > 0);
    sandbox.hold(true);
    inUse.add(sandbox);
    publishCounts();
    // Once this one is loaded, the spares are loaded after it (a process that never runs Python starts none).
    sandbox.ready.then(refill, () => {});
    try {
      return await use(sandbox);
    } finally {
      await sandbox.stop();
      inUse.delete(sandbox);
      const left = runningByTenant.get(tenantId)! - 1;
      if (left === 0) runningByTenant.delete(tenantId);
      else runningByTenant.set(tenantId, left);
      publishCounts();
    }
  }

  return {
    withSandbox(tenantId, signal, use) {
      if (isClosed) return Promise.reject(new Error('the Python sandboxes are shut down'));
      const askedAt = performance.now();
      // The caller has its answer as soon as `use` settles; the turn is held until the process is gone.
      return new Promise((resolve, reject) => {
        turns.take(tenantId, signal, () => {
          pythonSandboxWait.observe((performance.now() - askedAt) / 1000);
          return useSandbox(tenantId, (sandbox) => use(sandbox).then(resolve, reject));
        }).catch(reject).finally(publishCounts);
        publishCounts();
      });
    },
    counts: () => ({
      running: inUse.size,
      spareLoading: spares.filter((spare) => !spare.isReady).length,
      spareReady: spares.filter((spare) => spare.isReady).length,
      waiting: turns.counts().waiting,
    }),
    async close() {
      isClosed = true;
      await Promise.all([...spares.map((spare) => spare.sandbox), ...inUse].map((sandbox) => sandbox.stop()));
      spares.length = 0;
    },
  };
}

const pools = new Map<Readonly<PythonSettings>, SandboxPool>();

/** The pool of these settings: one per server process, whose configuration is made once. */
export function sandboxPoolFor(settings: Readonly<PythonSettings>): SandboxPool {
  let pool = pools.get(settings);
  if (!pool) {
    pool = createSandboxPool(settings);
    pools.set(settings, pool);
  }
  return pool;
}

/** On shutdown: every sandbox process of this process is killed. */
export async function closeSandboxPools(): Promise<void> {
  const closing = [...pools.values()];
  pools.clear();
  await Promise.all(closing.map((pool) => pool.close()));
}

function publishCounts(): void {
  const total: SandboxCounts = { running: 0, spareLoading: 0, spareReady: 0, waiting: 0 };
  for (const pool of pools.values()) {
    const counts = pool.counts();
    for (const key of Object.keys(total) as Array<keyof SandboxCounts>) total[key] += counts[key];
  }
  pythonSandboxes.set({ state: 'running' }, total.running);
  pythonSandboxes.set({ state: 'spare_loading' }, total.spareLoading);
  pythonSandboxes.set({ state: 'spare_ready' }, total.spareReady);
  pythonSandboxCallsWaiting.set(total.waiting);
}
