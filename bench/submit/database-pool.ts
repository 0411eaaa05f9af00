import pg from 'pg';

/**
 * A small pool on the gateway's database. On Ctrl-C the gateway stops its Postgres while our clients are
 * idle in the pool; their connection errors must not crash the run before it has cleaned up.
 */
export function openPool(databaseUrl: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  pool.on('error', () => {});
  return pool;
}
