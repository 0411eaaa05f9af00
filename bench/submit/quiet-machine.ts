import { setTimeout as sleep } from 'node:timers/promises';
import { machineBusySeconds } from './process-cpu.ts';

const SAMPLE_MS = 2_000;

/**
 * The machine is shared (other sessions run test suites on it), and a benchmark run beside them measures
 * them too. Waits until the whole machine used less than `maximumPercent` of one core over 2 s, or until
 * `timeoutMs`; returns the last busy percentage seen, to be reported either way.
 */
export async function waitForQuietMachine(maximumPercent: number, timeoutMs: number, log: (message: string) => void): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const busy = await busyPercent();
    if (busy <= maximumPercent) return busy;
    if (Date.now() >= deadline) {
      log(`the machine is still ${busy.toFixed(0)} % busy; running anyway (see "rest of the machine")`);
      return busy;
    }
    log(`the machine is ${busy.toFixed(0)} % busy (other processes); waiting for it to settle`);
  }
}

async function busyPercent(): Promise<number> {
  const before = await machineBusySeconds();
  await sleep(SAMPLE_MS);
  return (100 * (await machineBusySeconds() - before)) / (SAMPLE_MS / 1000);
}
