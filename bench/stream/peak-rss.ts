import { readFile } from 'node:fs/promises';

const SAMPLE_INTERVAL_MS = 100;

export interface RssSampler {
  /** Stops sampling; RSS in MiB when sampling started, and the most seen since. */
  stop(): Promise<{ startMiB: number; peakMiB: number }>;
}

/** Samples a process's resident set (VmRSS in /proc/<pid>/status) every 100 ms and keeps the peak. */
export async function sampleRss(pid: number): Promise<RssSampler> {
  const startKiB = await readRssKiB(pid);
  let peakKiB = startKiB;
  const timer = setInterval(() => {
    void readRssKiB(pid).then((kiB) => { peakKiB = Math.max(peakKiB, kiB); });
  }, SAMPLE_INTERVAL_MS);
  // A run that fails must not be kept alive by its sampler.
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      peakKiB = Math.max(peakKiB, await readRssKiB(pid));
      return { startMiB: startKiB / 1024, peakMiB: peakKiB / 1024 };
    },
  };
}

async function readRssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match ? Number(match[1]) : 0;
}
