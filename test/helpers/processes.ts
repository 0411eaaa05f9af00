import { readdir, readFile } from 'node:fs/promises';

/** The processes whose parent is `parent` (Linux: read from /proc). */
export async function childrenOf(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (which may hold spaces, hence the last parenthesis): state, ppid, ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === parent) children.push(Number(name));
  }
  return children;
}

/** The command line of a process, its arguments joined by spaces ('' once it has exited). */
export async function commandLineOf(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ').trim();
}

/** The resident memory of a process in MB (VmRSS of /proc/<pid>/status). */
export async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) / 1024;
}

/** The nice value of each thread of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
export async function threadNiceValues(pid: number): Promise<number[]> {
  const threads = await readdir(`/proc/${pid}/task`).catch(() => []);
  const stats = await Promise.all(threads.map((tid) => readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '')));
  return stats.filter(Boolean).map((stat) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
}

/** The names of the environment variables a process started with. */
export async function environmentNamesOf(pid: number): Promise<string[]> {
  const environment = await readFile(`/proc/${pid}/environ`, 'utf8');
  return environment.split('\0').filter(Boolean).map((entry) => entry.slice(0, entry.indexOf('=')));
}

export async function oomScoreAdjustmentOf(pid: number): Promise<number> {
  return Number(await readFile(`/proc/${pid}/oom_score_adj`, 'utf8'));
}
