/**
 * Diagnostic companion of run.ts: the same gateway and streaming chat completions (32 streams, 10 s by default)
 * with pg_stat_statements loaded, then the statements that cost Postgres the most, with how often each runs
 * per request. Records nothing.
 * Usage: node bench/openai/statements.ts [streams] [seconds]
 */
import path from 'node:path';
import type pg from 'pg';
import { openPool } from '../submit/database-pool.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { measureGatewayTtft } from './gateway-ttft.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOP_STATEMENTS = 30;
const QUERY_PREFIX_CHARS = 110;

interface StatementRow {
  calls: string;
  total_ms: number;
  mean_ms: number;
  query: string;
}

async function main(argv: string[]): Promise<void> {
  const [streams = 32, seconds = 10] = argv.map(Number);
  let gateway = await startGateway({ root: ROOT, profileDir: undefined, env: { MOCK_DELAY_MS: process.env.MOCK_DELAY_MS ?? '200' } });
  try {
    await withPool(gateway, (pool) => pool.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`));
    gateway = await gateway.restart();
    await withPool(gateway, (pool) => pool.query('create extension if not exists pg_stat_statements'));
    await measureGatewayTtft(gateway.url, { concurrency: streams, durationSeconds: 2, label: 'warmup' });
    await withPool(gateway, (pool) => pool.query('select pg_stat_statements_reset()'));
    const run = await measureGatewayTtft(gateway.url, { concurrency: streams, durationSeconds: seconds, label: 'measured' });
    // Let the last tasks finish so that their closing statements are counted too.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    console.log(await withPool(gateway, (pool) => describeStatements(pool, run.requests.length)));
  } finally {
    await gateway.stop();
  }
}

async function describeStatements(pool: pg.Pool, requests: number): Promise<string> {
  const { rows } = await pool.query<StatementRow>(`
    select calls::text, total_exec_time as total_ms, mean_exec_time as mean_ms,
           regexp_replace(left(query, $1), '\\s+', ' ', 'g') as query
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      and query not like '%pg_stat_statements%'
    order by total_exec_time desc`, [QUERY_PREFIX_CHARS]);
  const totalMs = rows.reduce((sum, row) => sum + row.total_ms, 0);
  const totalCalls = rows.reduce((sum, row) => sum + Number(row.calls), 0);
  const lines = rows.slice(0, TOP_STATEMENTS).map((row) => `| ${[
    (Number(row.calls) / requests).toFixed(2), row.mean_ms.toFixed(3), row.total_ms.toFixed(0),
    `${((100 * row.total_ms) / totalMs).toFixed(1)} %`, `\`${row.query.replaceAll('|', '\\|')}\``,
  ].join(' | ')} |`);
  return [
    `${requests} requests; ${(totalCalls / requests).toFixed(1)} statements and ${(totalMs / requests).toFixed(2)} ms of statement time per request.`,
    '',
    '| calls per request | mean ms | total ms | share | statement |',
    '| --- | --- | --- | --- | --- |',
    ...lines,
  ].join('\n');
}

async function withPool<T>(gateway: Gateway, use: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = openPool(gateway.databaseUrl, 1);
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
