import { logActivity, sampleActivityIfAsked } from './activity-sampler.ts';
import { openPool } from './database-pool.ts';
import { databaseWorkBetween, markDatabase, perTask } from './database-work.ts';
import type { Gateway } from './gateway-process.ts';
import { runLoad } from './load.ts';
import { waitForQuietMachine } from './quiet-machine.ts';
import { LOAD_SECONDS, loadOptions, measureLoad, QUIET_PERCENT, QUIET_TIMEOUT_MS, WARMUP_SECONDS } from './measure-load.ts';
import type { ScenarioResult } from './report.ts';
import { pollUntilDrained, summarizeCompletions, waitUntilIdle } from './task-completions.ts';

const DRAIN_CAP_MS = 120_000;

type Log = (message: string) => void;

/**
 * Warm-up, wait for its tasks, then the measured load; meanwhile and after it, polls the tasks table until
 * every task of the run is done. Database work is counted from the load's start to the last completion.
 */
export async function benchmarkGateway(gateway: Gateway, log: Log): Promise<ScenarioResult> {
  const pool = openPool(gateway.databaseUrl, 2);
  try {
    const url = `${gateway.url}/api/v1/tasks`;
    log(`gateway: ${WARMUP_SECONDS} s warm-up`);
    await runLoad(loadOptions(url, 'warm-up', WARMUP_SECONDS));
    await waitUntilIdle(pool, DRAIN_CAP_MS);
    const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
    log(`gateway: ${LOAD_SECONDS} s load, then waiting for every task to complete`);
    const before = await markDatabase(pool);
    const since = new Date();
    let isLoadDone = false;
    const loadActivity = await sampleActivityIfAsked(gateway.databaseUrl);
    const windowStartMicroseconds = monotonicMicroseconds();
    const measuring = measureLoad({ serverPid: gateway.pid, clusterDir: gateway.clusterDir }, loadOptions(url, 'bench', LOAD_SECONDS))
      .finally(() => { isLoadDone = true; });
    const polling = pollUntilDrained(pool, { since, isLoadDone: () => isLoadDone, capAfterLoadMs: DRAIN_CAP_MS });
    const { load, cpu } = await measuring;
    logProfileWindow(log, windowStartMicroseconds);
    const drainActivity = await logActivity(log, 'during the load', loadActivity).then(() => sampleActivityIfAsked(gateway.databaseUrl));
    const { samples, isDrained } = await polling;
    await logActivity(log, 'after the load, until every task completed', drainActivity);
    const work = await databaseWorkBetween(pool, before, await markDatabase(pool));
    const completions = await summarizeCompletions(pool, since, load.finishedAt);
    return {
      name: 'gateway', load, cpu, busyBefore, work: perTask(work, completions.submitted),
      completions: { ...completions, isDrained, peakBacklog: Math.max(...samples.map((sample) => sample.unfinished)) },
    };
  } finally {
    await pool.end();
  }
}

/** V8 profiles time their samples on the system's monotonic clock, as hrtime does: this finds the load in them. */
function logProfileWindow(log: Log, startMicroseconds: bigint): void {
  if (process.env.BENCH_CPU_PROF === '1') log(`load window on the monotonic clock: ${startMicroseconds}..${monotonicMicroseconds()} µs`);
}

const monotonicMicroseconds = () => process.hrtime.bigint() / 1000n;
