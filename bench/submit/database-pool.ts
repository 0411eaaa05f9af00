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

/** Runs `use` with a pool of its own on the database, ended afterwards. */
export async function withPool<T>(databaseUrl: string, use: (pool: pg.Pool) => Promise<T>, max = 1): Promise<T> {
  const pool = openPool(databaseUrl, max);
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}
