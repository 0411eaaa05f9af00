import { readdir, readFile } from 'node:fs/promises';
import { readPostmasterPid } from '../../src/db/postmaster-process.ts';

/** Linux reports process times in clock ticks of 1/100 s (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = 100;

export interface CpuTargets {
  serverPid: number;
  /** Cluster directory of the Postgres to include, with all its backends. */
  clusterDir: string;
}

/**
 * CPU seconds (user + system) used so far by the server process, by the whole Postgres process tree, and by
 * this process. A backend that exits moves its time into the postmaster's reaped-children fields, so the
 * tree's sum only grows and two snapshots can be subtracted.
 */
export async function snapshotCpu(targets: CpuTargets): Promise<CpuSnapshot> {
  return {
    server: await cpuSeconds([targets.serverPid]),
    postgres: await postgresCpuSeconds(targets.clusterDir),
    bench: benchCpuSeconds(),
    machine: await machineBusySeconds(),
  };
}

/** CPU seconds of the Postgres whose cluster is in `clusterDir`: the postmaster and every backend, reaped ones included. */
export async function postgresCpuSeconds(clusterDir: string): Promise<number> {
  const postmaster = await readPostmasterPid(clusterDir);
  return cpuSeconds(postmaster ? [postmaster.pid, ...await childPids(postmaster.pid)] : []);
}

/** CPU seconds of this process. */
export function benchCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

export interface CpuSnapshot {
  server: number;
  postgres: number;
  bench: number;
  /** Every process on the machine, ours included: others share these cores and skew the numbers. */
  machine: number;
}

/** Busy time of all cores from the first line of /proc/stat: everything but idle and iowait. */
export async function machineBusySeconds(): Promise<number> {
  const [, ...ticks] = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/** CPU seconds (user + system, with reaped children) of these processes; one that is gone counts 0. */
export async function cpuSeconds(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    const fields = await readStatFields(pid);
    // Fields 14-17 of /proc/<pid>/stat: utime, stime, and the same for reaped children.
    if (fields) ticks += [13, 14, 15, 16].reduce((total, index) => total + Number(fields[index]), 0);
  }
  return ticks / TICKS_PER_SECOND;
}

async function childPids(parentPid: number): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const children: number[] = [];
  for (const pid of pids) {
    const fields = await readStatFields(pid);
    if (fields && Number(fields[3]) === parentPid) children.push(pid);
  }
  return children;
}

/** The fields of /proc/<pid>/stat, numbered from 0; the command name may hold spaces, so split after it. */
async function readStatFields(pid: number): Promise<string[] | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    return [String(pid), '', ...text.slice(text.lastIndexOf(')') + 2).split(' ')];
  } catch {
    return undefined;
  }
}
