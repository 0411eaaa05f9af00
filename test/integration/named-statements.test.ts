import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase, survivingLostConnections, type Db } from '../../src/db/database.ts';
import { isDatabaseUnavailable } from '../../src/db/database-errors.ts';
import { clientNaming, createStatementNames } from '../../src/db/statement-names.ts';
import { createTestDatabase } from '../helpers/gateway.ts';

const POOL = { size: 1, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 };

/** Named statements held by the pool's one connection (pg_prepared_statements lists the protocol's too). */
async function namedOnConnection(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements where not from_sql and statement not like '%pg_prepared_statements%' order by name`.execute(db);
  return rows.map((row) => row.name);
}

const readWidgets = (db: Db) => db.selectFrom('widgets' as never).selectAll().where('id' as never, '>', 0 as never).execute() as Promise<Array<Record<string, unknown>>>;

test('a statement sent again is prepared by name once per connection; the setting turned off prepares none', async (t) => {
  const url = await createTestDatabase(t);
  const named = createDatabase(url, POOL);
  t.after(() => named.pool.end());
  await sql`create table widgets (id int primary key)`.execute(named.db);
  await readWidgets(named.db);
  assert.deepEqual(await namedOnConnection(named.db), [], 'a text used once is not named');
  await readWidgets(named.db);
  await readWidgets(named.db);
  const names = await namedOnConnection(named.db);
  assert.equal(names.length, 1, `the select is named once: ${names.join(', ')}`);
  assert.match(names[0], /^ag_[\w-]{24}$/);

  const unnamed = createDatabase(url, { ...POOL, namedStatements: false });
  t.after(() => unnamed.pool.end());
  for (let run = 0; run < 3; run++) await readWidgets(unnamed.db);
  assert.deepEqual(await namedOnConnection(unnamed.db), []);
});

test('a named statement whose table another process changed fails once as a passing condition, then runs prepared anew', async (t) => {
  const url = await createTestDatabase(t);
  const { db, pool } = createDatabase(url, POOL);
  t.after(() => pool.end());
  await sql`create table widgets (id int primary key)`.execute(db);
  await sql`insert into widgets values (1)`.execute(db);
  for (let run = 0; run < 3; run++) assert.deepEqual(await readWidgets(db), [{ id: 1 }]);

  // Another process's migration: a column more changes what `select *` returns.
  const other = createDatabase(url, { ...POOL, namedStatements: false });
  t.after(() => other.pool.end());
  await sql`alter table widgets add column label text default 'new'`.execute(other.db);

  const stale = await readWidgets(db).then(() => undefined, (error: unknown) => error);
  assert.ok(stale instanceof Error, 'the statement prepared before the change cannot run as it was planned');
  assert.ok(isDatabaseUnavailable(stale), `its error is one the retries wait out: ${stale.message}`);
  assert.deepEqual(await readWidgets(db), [{ id: 1, label: 'new' }], 'run again on a fresh connection, it sees the new column');
});

test('the naming client names statements sent with values, through pool.query too, and leaves scripts alone', async (t) => {
  const pool = survivingLostConnections(new pg.Pool({ connectionString: await createTestDatabase(t), max: 1, Client: clientNaming(createStatementNames()) }));
  t.after(() => pool.end());
  for (let run = 0; run < 3; run++) {
    assert.deepEqual((await pool.query('select $1::int + 1 as answer', [41])).rows, [{ answer: 42 }]);
    assert.equal((await pool.query('select 1 as one; select 2 as two') as unknown as pg.QueryResult[]).length, 2, 'a script of two statements still runs');
    assert.equal((await pool.query('select 3 as three; select 4 as four', []) as unknown as pg.QueryResult[]).length, 2, 'so does one sent with no values');
  }
  const { rows } = await pool.query(`select statement from pg_prepared_statements where not from_sql and statement not like '%pg_prepared_statements%'`);
  assert.deepEqual(rows.map((row) => row.statement), ['select $1::int + 1 as answer']);
});
