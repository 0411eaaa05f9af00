import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, runRefused, startGateway, waitForTask } from '../helpers/gateway.ts';
import { startPostgresProxy } from '../helpers/postgres-proxy.ts';

async function publicTables(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`select count(*)::int as count from information_schema.tables where table_schema in ('public', 'dbos')`);
    return rows[0].count;
  } finally {
    await client.end();
  }
}

// Before: behind PgBouncer with pool_mode = transaction, a gateway started and answered ready while its worker's
// engine failed with "deadlock detected", and submitted tasks stayed QUEUED; nothing said why.
test('connections on which a notification does not arrive (a transaction-mode pooler) are refused at start-up, saying why, before anything is migrated', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const pooler = await startPostgresProxy(databaseUrl, { dropNotifications: true });
  t.after(() => pooler.close());

  for (const args of [['serve'], ['serve', '--role', 'worker'], ['migrate']]) {
    const startedAt = Date.now();
    const refused = await runRefused(pooler.url, {}, args);
    assert.equal(refused.code, 1, `${args.join(' ')}: ${refused.output}`);
    assert.match(refused.output, /DATABASE_URL does not give connections that stay one Postgres session/);
    assert.match(refused.output, /pool_mode = transaction/);
    assert.ok(Date.now() - startedAt < 20_000, `${args.join(' ')} refused after ${Date.now() - startedAt} ms`);
  }
  assert.equal(await publicTables(databaseUrl), 0, 'nothing was created');
});

test('connections through a proxy that keeps sessions (a session-mode pooler) serve as a direct connection does', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const pooler = await startPostgresProxy(databaseUrl, { dropNotifications: false });
  t.after(() => pooler.close());
  const gateway = await startGateway(t, { databaseUrl: pooler.url });
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'through the pooler', mode: 'simple' });
  assert.equal(submitted.status, 200, submitted.text);
  assert.equal((await waitForTask(gateway, submitted.body.task_id)).status, 'TASK_STATUS_COMPLETED');
});
