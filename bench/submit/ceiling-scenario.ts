import { startChildServer } from './child-server.ts';
import { openPool } from './database-pool.ts';
import { databaseWorkBetween, markDatabase, perTask } from './database-work.ts';
import { freePort } from './free-port.ts';
import type { Gateway } from './gateway-process.ts';
import { runLoad } from './load.ts';
import { waitForQuietMachine } from './quiet-machine.ts';
import { LOAD_SECONDS, loadOptions, measureLoad, QUIET_PERCENT, QUIET_TIMEOUT_MS, WARMUP_SECONDS } from './measure-load.ts';
import type { ScenarioResult } from './report.ts';

const READY_TIMEOUT_MS = 30_000;

/** The one-INSERT Fastify server (ceiling-server.ts) on the gateway's Postgres, under the same load. */
export async function benchmarkCeiling(root: string, gateway: Gateway, log: (message: string) => void): Promise<ScenarioResult> {
  const port = await freePort();
  const server = await startChildServer({
    script: 'bench/submit/ceiling-server.ts',
    cwd: root,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: gateway.databaseUrl, PORT: String(port), ...gateway.settings },
    port,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  const pool = openPool(gateway.databaseUrl, 1);
  try {
    const url = `${server.url}/ceiling`;
    log(`ceiling: ${WARMUP_SECONDS} s warm-up, ${LOAD_SECONDS} s load`);
    await runLoad(loadOptions(url, 'warm-up', WARMUP_SECONDS));
    const busyBefore = await waitForQuietMachine(QUIET_PERCENT, QUIET_TIMEOUT_MS, log);
    const before = await markDatabase(pool);
    const { load, cpu } = await measureLoad({ serverPid: server.pid, clusterDir: gateway.clusterDir }, loadOptions(url, 'ceiling', LOAD_SECONDS));
    const work = await databaseWorkBetween(pool, before, await markDatabase(pool));
    return { name: 'ceiling (Fastify + 1 INSERT)', load, cpu, busyBefore, work: perTask(work, load.succeeded) };
  } finally {
    await pool.end();
    await server.stop();
  }
}
