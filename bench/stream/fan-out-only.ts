/**
 * Only part (a) of run.ts, the fan-out, at one level beside the bare broadcaster: for comparing a change
 * before and after when the full run (catch-up and first event too) does not fit. Records nothing.
 * Usage: node bench/stream/fan-out-only.ts [subscribers=5000]
 */
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startGateway } from '../submit/gateway-process.ts';
import { machineLine } from '../submit/report.ts';
import { measureBroadcasterFanOut, measureGatewayFanOut, type FanOutLevel } from './fan-out.ts';
import { createApiAccount } from './gateway-api.ts';
import { fanOutRow, KIND_TABLE_HEAD, latencyByKindRow } from './report.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** As run.ts: authentication by API key, the per-key stream cap and rate limit raised for one key to hold every stream. */
const GATEWAY_SETTINGS = { GATEWAY_SKIP_AUTH: '0', MAX_STREAMS_PER_KEY: '10000', RATE_LIMIT_PER_MINUTE: '1000000' };

async function main(argv: string[]): Promise<void> {
  const subscribers = Number(argv[0] ?? 5_000);
  const level: FanOutLevel = {
    subscribers, tasks: 10, answerWords: 4_000, answerMs: 15_000,
    partialIntervalMs: loadConfig({}).events.partialIntervalMs, clientWorkers: Number(process.env.BENCH_CLIENT_WORKERS ?? 2),
  };
  const gateway = await startGateway({ root: ROOT, profileDir: process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench/stream/profiles') : undefined, env: GATEWAY_SETTINGS });
  try {
    const api = await createApiAccount(gateway.url);
    const result = await measureGatewayFanOut(gateway, api, level, log);
    api.agent.destroy();
    const broadcaster = await measureBroadcasterFanOut(ROOT, gateway, level, result.flow.dataBytes, log);
    console.log(machineLine());
    console.log('| streams | server | streams open (refused) | opening took s | events delivered / expected | delivered events/s | commit → receipt p50 / p90 / p99 / max ms | seq gaps, error events | RSS before → peak MiB |');
    console.log(fanOutRow('gateway', result));
    console.log(fanOutRow('bare broadcaster', broadcaster));
    console.log(['', 'gateway, by kind of event:', ...KIND_TABLE_HEAD, latencyByKindRow(result)].join('\n'));
    console.log(`share of the broadcaster: ${(100 * result.deliveredPerSecond / broadcaster.deliveredPerSecond).toFixed(0)} %; CPU gateway ${result.cpu.server.toFixed(0)} %, postgres ${result.cpu.postgres.toFixed(0)} %, bench ${result.cpu.bench.toFixed(0)} %, other ${result.cpu.other.toFixed(0)} %`);
  } finally {
    await gateway.stop();
  }
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
