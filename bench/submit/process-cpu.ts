import { readdir, readFile } from 'node:fs/promises';
import { readPostmasterPid } from '../../src/db/postmaster-process.ts';

/** Linux reports process times in clock ticks of 1/100 s (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = 100;

export interface CpuSnapshot {
  /** CPU seconds (user + system) per pid; a postmaster's also include its exited backends. */
  secondsByPid: Map<number, number>;
}

export interface CpuTargets {
  serverPid: number;
  /** Cluster directory of the Postgres to include, with all its backends. */
  clusterDir: string;
}

export async function snapshotCpu(targets: CpuTargets): Promise<{ server: CpuSnapshot; postgres: CpuSnapshot; bench: number }> {
  const postmaster = await readPostmasterPid(targets.clusterDir);
  const postgresPids = postmaster ? [postmaster.pid, ...await childPids(postmaster.pid)] : [];
  const bench = process.cpuUsage();
  return {
    server: await snapshot([targets.serverPid]),
    postgres: await snapshot(postgresPids),
    bench: (bench.user + bench.system) / 1e6,
  };
}

/** CPU seconds spent between two snapshots; a pid absent from `before` started in between. */
export function cpuSecondsBetween(before: CpuSnapshot, after: CpuSnapshot): number {
  let total = 0;
  for (const [pid, seconds] of after.secondsByPid) total += seconds - (before.secondsByPid.get(pid) ?? 0);
  return total;
}

async function snapshot(pids: number[]): Promise<CpuSnapshot> {
  const secondsByPid = new Map<number, number>();
  for (const pid of pids) {
    const fields = await readStatFields(pid);
    if (!fields) continue;
    // Fields 14-17 of /proc/<pid>/stat: utime, stime, and the same for reaped children.
    const ticks = [13, 14, 15, 16].reduce((sum, index) => sum + Number(fields[index]), 0);
    secondsByPid.set(pid, ticks / TICKS_PER_SECOND);
  }
  return { secondsByPid };
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
    const afterName = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return [String(pid), '', ...afterName];
  } catch {
    return undefined;
  }
}
