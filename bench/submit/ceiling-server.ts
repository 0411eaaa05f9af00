/**
 * The ceiling for the submit path: a bare Fastify server whose one POST route does one INSERT into the
 * gateway's Postgres, with the gateway's default pool size. Started by run.ts as a child process,
 * like the gateway, so the load generator never shares its event loop.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const DEFAULT_POOL_SIZE = 20;

async function serveCeiling(env: NodeJS.ProcessEnv): Promise<void> {
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_SIZE ?? DEFAULT_POOL_SIZE) });
  pool.on('error', () => {});
  await pool.query(`create table if not exists bench_ceiling (
    id uuid primary key, query text not null, created_at timestamptz not null default now())`);
  const app = Fastify({ logger: false });
  app.post<{ Body: { query: string } }>('/ceiling', async (request) => {
    const id = randomUUID();
    const { rows } = await pool.query<{ created_at: Date }>(
      'insert into bench_ceiling (id, query) values ($1, $2) returning created_at', [id, request.body.query]);
    return { task_id: id, created_at: rows[0].created_at.toISOString() };
  });
  app.get('/readiness', async () => ({ status: 'ready' }));
  process.once('SIGTERM', async () => {
    await app.close();
    await pool.end();
  });
  await app.listen({ host: '127.0.0.1', port: Number(env.PORT) });
}

serveCeiling(process.env).catch((error) => {
  console.error(error);
  process.exit(1);
});
