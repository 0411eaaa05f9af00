import { runLoad, type LoadOptions, type LoadResult } from './load.ts';
import { snapshotCpu, type CpuSnapshot, type CpuTargets } from './process-cpu.ts';

export const CONNECTIONS = 64;
export const WARMUP_SECONDS = 2;
export const LOAD_SECONDS = 10;
/** Before a measured load, wait up to 3 minutes for the machine (idle gateway included) to use under 30 % of a core. */
export const QUIET_PERCENT = 30;
export const QUIET_TIMEOUT_MS = 180_000;

/** Percent of one core over the load window, per side; `other` is the rest of the machine's busy time. */
export interface CpuShare {
  server: number;
  postgres: number;
  bench: number;
  other: number;
}

/** The same client load for every scenario: 64 keep-alive clients, distinct small queries. */
export function loadOptions(url: string, label: string, durationSeconds: number): LoadOptions {
  return { url, label, durationSeconds, connections: CONNECTIONS };
}

/** Runs the load and measures the CPU each side used meanwhile. */
export async function measureLoad(targets: CpuTargets, options: LoadOptions): Promise<{ load: LoadResult; cpu: CpuShare }> {
  const before = await snapshotCpu(targets);
  const load = await runLoad(options);
  const after = await snapshotCpu(targets);
  return { load, cpu: cpuShareBetween(before, after, (load.finishedAt.getTime() - load.startedAt.getTime()) / 1000) };
}

/** The CPU each side used between two snapshots `seconds` apart, in percent of one core. */
export function cpuShareBetween(before: CpuSnapshot, after: CpuSnapshot, seconds: number): CpuShare {
  const percent = (cpuSeconds: number) => (100 * cpuSeconds) / seconds;
  const [server, postgres, bench, machine] = [after.server - before.server, after.postgres - before.postgres,
    after.bench - before.bench, after.machine - before.machine];
  return { server: percent(server), postgres: percent(postgres), bench: percent(bench), other: percent(machine - server - postgres - bench) };
}
