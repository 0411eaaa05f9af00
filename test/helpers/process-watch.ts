import { readFile } from 'node:fs/promises';

export interface Watch<T> { stop(): Promise<T> }

/**
 * Asks GET /health every `intervalMs` on a fixed schedule, whether or not the last answer came: a stalled event
 * loop shows as every probe sent during the stall, each late by what it waited. Resolves with each probe's
 * latency in ms, from when it was due to its answer; a probe that failed (or was not answered 200) is Infinity.
 */
export function watchHealth(baseUrl: string, intervalMs = 10): Watch<number[]> {
  const probes: Array<Promise<number>> = [];
  const timer = setInterval(() => {
    const dueAt = performance.now();
    probes.push(fetch(`${baseUrl}/health`).then(async (response) => {
      await response.arrayBuffer();
      return response.ok ? performance.now() - dueAt : Infinity;
    }, () => Infinity));
  }, intervalMs);
  return { stop: async () => { clearInterval(timer); return Promise.all(probes); } };
}

/** Samples a process's resident memory (VmRSS) every `intervalMs`; resolves with the largest, in MB. */
export function watchRss(pid: number, intervalMs = 50): Watch<number> {
  let peakMb = 0;
  const sample = async () => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const kilobytes = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0);
    peakMb = Math.max(peakMb, kilobytes / 1024);
  };
  const timer = setInterval(() => void sample(), intervalMs);
  return { stop: async () => { clearInterval(timer); await sample(); return peakMb; } };
}

/** The value below which `share` of the values fall (0.99: the 99th percentile). */
export function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)];
}
