/**
 * Diagnostic companion of run.ts: the same gateway run with pg_stat_statements loaded, then the statements
 * that cost Postgres the most, with how often each runs per task. Records nothing.
 * Usage: node bench/submit/statements.ts   (WORKER_CONCURRENCY / DB_POOL_SIZE are passed on, as in run.ts)
 */
import path from 'node:path';
import type pg from 'pg';
import { openPool } from './database-pool.ts';
import { benchmarkGateway } from './gateway-scenario.ts';
import { startGateway, type Gateway } from './gateway-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOP_STATEMENTS = 25;
const QUERY_PREFIX_CHARS = 110;

interface StatementRow {
  calls: string;
  total_ms: number;
  mean_ms: number;
  rows: string;
  query: string;
}

async function main(): Promise<void> {
  log('starting the gateway, then restarting it with pg_stat_statements loaded');
  let gateway = await startGateway({ root: ROOT, profileDir: undefined });
  try {
    await withPool(gateway, (pool) => pool.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`));
    gateway = await gateway.restart();
    await withPool(gateway, (pool) => pool.query('create extension if not exists pg_stat_statements'));
    const result = await benchmarkGateway(gateway, log);
    log(`${result.completions?.completed} tasks completed, ${result.load.submissionsPerSecond.toFixed(0)} submissions/s`);
    console.log(await withPool(gateway, describeStatements));
  } finally {
    await gateway.stop();
  }
}

/** Counts cover the warm-up as well as the measured run, so they are divided by every task in the table. */
async function describeStatements(pool: pg.Pool): Promise<string> {
  const { rows: [{ tasks }] } = await pool.query<{ tasks: number }>('select count(*)::int as tasks from tasks');
  const { rows } = await pool.query<StatementRow>(`
    select calls::text, total_exec_time as total_ms, mean_exec_time as mean_ms, rows::text,
           regexp_replace(left(query, $1), '\\s+', ' ', 'g') as query
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
    order by total_exec_time desc`, [QUERY_PREFIX_CHARS]);
  const totalMs = rows.reduce((sum, row) => sum + row.total_ms, 0);
  const totalCalls = rows.reduce((sum, row) => sum + Number(row.calls), 0);
  const lines = rows.slice(0, TOP_STATEMENTS).map((row) => `| ${[
    (Number(row.calls) / tasks).toFixed(2), row.mean_ms.toFixed(3), (row.total_ms / 1000).toFixed(2),
    `${((100 * row.total_ms) / totalMs).toFixed(1)} %`, `\`${row.query.replaceAll('|', '\\|')}\``,
  ].join(' | ')} |`);
  return [
    `${tasks} tasks; ${(totalCalls / tasks).toFixed(1)} statements and ${(totalMs / tasks).toFixed(2)} ms of statement time per task.`,
    '',
    '| calls per task | mean ms | total s | share | statement |',
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

const log = (message: string) => console.error(`[statements] ${message}`);

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
