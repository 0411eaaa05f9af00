import { benchCpuSeconds, cpuSeconds, machineBusySeconds, postgresCpuSeconds } from '../submit/process-cpu.ts';

export interface CpuTargets {
  gatewayPid: number;
  workerPids: number[];
  clusterDir: string;
}

/** CPU seconds used so far by each process of the run, Postgres, this process, and the whole machine. */
export interface CpuReading {
  atMs: number;
  gateway: number;
  workers: number[];
  postgres: number;
  bench: number;
  machine: number;
}

/** Percent of one core between two readings; `rest` is everything else the machine ran (other sessions, interrupts). */
export interface CpuSplit {
  gateway: number;
  workers: number[];
  postgres: number;
  bench: number;
  rest: number;
  machine: number;
}

export async function readCpu(targets: CpuTargets): Promise<CpuReading> {
  return {
    atMs: Date.now(),
    gateway: await cpuSeconds([targets.gatewayPid]),
    workers: await Promise.all(targets.workerPids.map((pid) => cpuSeconds([pid]))),
    postgres: await postgresCpuSeconds(targets.clusterDir),
    bench: benchCpuSeconds(),
    machine: await machineBusySeconds(),
  };
}

export function cpuSplitBetween(before: CpuReading, after: CpuReading): CpuSplit {
  const seconds = (after.atMs - before.atMs) / 1000;
  const percent = (cpuSeconds: number) => (100 * cpuSeconds) / seconds;
  const workers = after.workers.map((used, index) => used - before.workers[index]);
  const [gateway, postgres, bench, machine] = [after.gateway - before.gateway, after.postgres - before.postgres,
    after.bench - before.bench, after.machine - before.machine];
  const ours = gateway + postgres + bench + workers.reduce((sum, used) => sum + used, 0);
  return {
    gateway: percent(gateway), workers: workers.map(percent), postgres: percent(postgres), bench: percent(bench),
    rest: percent(machine - ours), machine: percent(machine),
  };
}
