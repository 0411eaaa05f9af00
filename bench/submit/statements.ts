/**
 * Diagnostic companion of run.ts: the same gateway run with pg_stat_statements loaded, then the statements
 * that cost Postgres the most, with how often each runs per task. Records nothing.
 * Usage: node bench/submit/statements.ts   (WORKER_CONCURRENCY / DB_POOL_SIZE are passed on, as in run.ts)
 */
import path from 'node:path';
import type pg from 'pg';
import { withPool } from './database-pool.ts';
import { benchmarkGateway } from './gateway-scenario.ts';
import { startGateway } from './gateway-process.ts';
import { statementTable } from './statement-table.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
async function main(): Promise<void> {
  log('starting the gateway, then restarting it with pg_stat_statements loaded');
  let gateway = await startGateway({ root: ROOT, profileDir: undefined });
  try {
    await withPool(gateway.databaseUrl, (pool) => pool.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`));
    gateway = await gateway.restart();
    await withPool(gateway.databaseUrl, (pool) => pool.query('create extension if not exists pg_stat_statements'));
    const result = await benchmarkGateway(gateway, log);
    log(`${result.completions?.completed} tasks completed, ${result.load.submissionsPerSecond.toFixed(0)} submissions/s`);
    console.log(await withPool(gateway.databaseUrl, describeStatements));
  } finally {
    await gateway.stop();
  }
}

/** Counts cover the warm-up as well as the measured run, so they are divided by every task in the table. */
async function describeStatements(pool: pg.Pool): Promise<string> {
  const { rows: [{ tasks }] } = await pool.query<{ tasks: number }>('select count(*)::int as tasks from tasks');
  return statementTable(pool, tasks, 'task');
}

const log = (message: string) => console.error(`[statements] ${message}`);

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
