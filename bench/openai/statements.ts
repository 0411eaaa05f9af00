/**
 * Diagnostic companion of run.ts: the same gateway and streaming chat completions (32 streams, 10 s by default)
 * with pg_stat_statements loaded, then the statements that cost Postgres the most, with how often each runs
 * per request. Records nothing.
 * Usage: node bench/openai/statements.ts [streams] [seconds]
 */
import path from 'node:path';
import { withPool } from '../submit/database-pool.ts';
import { startGateway } from '../submit/gateway-process.ts';
import { statementTable } from '../submit/statement-table.ts';
import { DEVELOPMENT_KEY, measureGatewayTtft } from './gateway-ttft.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
async function main(argv: string[]): Promise<void> {
  const [streams = 32, seconds = 10] = argv.map(Number);
  let gateway = await startGateway({ root: ROOT, profileDir: undefined, env: { MOCK_DELAY_MS: process.env.MOCK_DELAY_MS ?? '200' } });
  try {
    await withPool(gateway.databaseUrl, (pool) => pool.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`));
    gateway = await gateway.restart();
    await withPool(gateway.databaseUrl, (pool) => pool.query('create extension if not exists pg_stat_statements'));
    await measureGatewayTtft(gateway.url, DEVELOPMENT_KEY, { concurrency: streams, durationSeconds: 2, label: 'warmup' });
    await withPool(gateway.databaseUrl, (pool) => pool.query('select pg_stat_statements_reset()'));
    const run = await measureGatewayTtft(gateway.url, DEVELOPMENT_KEY, { concurrency: streams, durationSeconds: seconds, label: 'measured' });
    // Let the last tasks finish so that their closing statements are counted too.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    console.log(await withPool(gateway.databaseUrl, (pool) => statementTable(pool, run.requests.length, 'request')));
  } finally {
    await gateway.stop();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
