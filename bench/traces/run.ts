/**
 * What traces cost the gateway: CPU seconds of the gateway process per completed task, with tracing off and with
 * every span exported over OTLP/HTTP (protobuf, the SDK's default) to a sink in this process, in alternating
 * rounds on one fresh embedded Postgres each. CPU per task, unlike throughput, barely moves when other work
 * shares the machine. Prints a Markdown table (bench/RESULTS.md keeps the runs).
 * Usage: node bench/traces/run.ts [rounds, default 2] [tasks per round, default 400]
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pLimit from 'p-limit';
import { openPool } from '../submit/database-pool.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway } from '../submit/gateway-process.ts';
import { snapshotCpu } from '../submit/process-cpu.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CONCURRENCY = 8;
const WARMUP_TASKS = 50;

interface RoundResult { mode: 'off' | 'on'; tasks: number; serverMs: number; postgresMs: number; seconds: number; exportedBytes: number }

async function main(argv: string[]): Promise<void> {
  const rounds = Number(argv[0] ?? 2);
  const tasks = Number(argv[1] ?? 400);
  const sink = await startSink();
  const results: RoundResult[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const mode of ['off', 'on'] as const) results.push(await measure(mode, tasks, sink));
    }
  } finally {
    sink.server.close();
  }
  console.log(`\n${report(results, describeCommit(ROOT))}`);
}

async function measure(mode: 'off' | 'on', tasks: number, sink: Sink): Promise<RoundResult> {
  const env: Record<string, string> = mode === 'on' ? { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : {};
  const gateway = await startGateway({ root: ROOT, profileDir: undefined, env });
  const pool = openPool(gateway.databaseUrl, 2);
  try {
    await runTasks(gateway.url, pool, WARMUP_TASKS);
    const bytesBefore = sink.bytes();
    const before = await snapshotCpu({ serverPid: gateway.pid, clusterDir: gateway.clusterDir });
    const startedAt = Date.now();
    await runTasks(gateway.url, pool, tasks);
    const after = await snapshotCpu({ serverPid: gateway.pid, clusterDir: gateway.clusterDir });
    console.error(`[traces] ${mode}: ${tasks} tasks in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    return {
      mode, tasks, seconds: (Date.now() - startedAt) / 1000, exportedBytes: sink.bytes() - bytesBefore,
      serverMs: (after.server - before.server) * 1000 / tasks, postgresMs: (after.postgres - before.postgres) * 1000 / tasks,
    };
  } finally {
    await pool.end();
    await gateway.stop();
  }
}

/** Submits `count` tasks, CONCURRENCY at a time, and waits until every task of the gateway has completed. */
async function runTasks(url: string, pool: ReturnType<typeof openPool>, count: number): Promise<void> {
  const limit = pLimit(CONCURRENCY);
  await Promise.all(Array.from({ length: count }, (_, index) => limit(async () => {
    const response = await fetch(`${url}/api/v1/tasks`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `What is ${index} + 1?` }),
    });
    if (response.status !== 200) throw new Error(`submission answered ${response.status}: ${await response.text()}`);
  })));
  for (;;) {
    const { rows } = await pool.query("select count(*) filter (where status <> 'COMPLETED')::int as open from tasks");
    if (rows[0].open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Sink { server: http.Server; url: string; bytes(): number }

/** Accepts every OTLP export, as a collector would, and counts what it received. */
async function startSink(): Promise<Sink> {
  let bytes = 0;
  const server = http.createServer((request, response) => {
    request.on('data', (chunk: Buffer) => { bytes += chunk.length; });
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes };
}

function report(results: RoundResult[], commit: string): string {
  const rows = results.map((result) => `| ${result.mode} | ${result.tasks} | ${result.seconds.toFixed(1)} | ${result.serverMs.toFixed(2)} | ${result.postgresMs.toFixed(2)} | ${(result.exportedBytes / result.tasks / 1024).toFixed(1)} |`);
  const mean = (mode: 'off' | 'on') => {
    const ofMode = results.filter((result) => result.mode === mode);
    return ofMode.reduce((total, result) => total + result.serverMs, 0) / ofMode.length;
  };
  return [
    `## Traces: gateway CPU per task, tracing off and on: ${new Date().toISOString()} (commit ${commit})`,
    '',
    `Default (auto) tasks with the mock model, ${CONCURRENCY} submissions at a time, ${WARMUP_TASKS} warm-up tasks per round first; on: every span exported over OTLP/HTTP protobuf to a local sink.`,
    '',
    '| tracing | tasks | seconds | gateway CPU ms per task | Postgres CPU ms per task | exported kB per task |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Mean gateway CPU per task: off ${mean('off').toFixed(2)} ms, on ${mean('on').toFixed(2)} ms (${((mean('on') / mean('off') - 1) * 100).toFixed(1)} %).`,
  ].join('\n');
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
