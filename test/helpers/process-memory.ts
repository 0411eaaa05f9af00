import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** A process's resident set size in bytes, from /proc/<pid>/status (Linux). */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kilobytes === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kilobytes) * 1024;
}

/** Runs `work` while sampling the process's RSS every `intervalMs`; resolves with its result and the highest RSS seen. */
export async function withPeakResident<T>(pid: number, work: () => Promise<T>, intervalMs = 20): Promise<{ result: T; peakBytes: number }> {
  let peakBytes = await residentBytes(pid);
  let done = false;
  const sampling = (async () => {
    while (!done) {
      peakBytes = Math.max(peakBytes, await residentBytes(pid));
      await sleep(intervalMs);
    }
  })();
  try {
    const result = await work();
    return { result, peakBytes: Math.max(peakBytes, await residentBytes(pid)) };
  } finally {
    done = true;
    await sampling;
  }
}
