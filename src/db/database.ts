import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

// bigint columns (counts, sums) come back as strings by default; our values fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createDatabase(connectionString: string, poolSize: number): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString, max: poolSize, application_name: 'agentgate' });
  // An idle client losing its connection (e.g. Postgres restarting) must not crash the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}
