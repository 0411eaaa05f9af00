/**
 * Cost of the STREAM_END guard in store_task_events (migration 0021) on the event write path: batches of
 * appends (50 tasks × 2 events, as the group committer sends them) through append_task_event_batch, with the
 * guarded function and with the one before it (migration 0014), in alternating rounds on one scratch database.
 *
 *   node bench/events/stream-end-guard.ts [postgres admin URL, default postgres://postgres@127.0.0.1:5432/postgres]
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

const ROUNDS = 6;
const BATCHES_PER_ROUND = 300;
const TASKS = 50;
const MIGRATIONS = path.join(import.meta.dirname, '../../src/db/migrations');
const TENANT = '00000000-0000-0000-0000-000000000001';
const USER = '00000000-0000-0000-0000-000000000002';

/** The CREATE FUNCTION store_task_events statement of a migration file. */
async function storeFunctionOf(file: string): Promise<string> {
  const text = await readFile(path.join(MIGRATIONS, file), 'utf8');
  const match = /CREATE OR REPLACE FUNCTION store_task_events[\s\S]*?\n\$\$;/.exec(text);
  if (!match) throw new Error(`no store_task_events in ${file}`);
  return match[0];
}

async function timeRound(pool: pg.Pool, taskIds: string[]): Promise<number[]> {
  const perBatchMs: number[] = [];
  for (let batch = 0; batch < BATCHES_PER_ROUND; batch++) {
    const entries = taskIds.map((taskId) => ({ task_id: taskId, events: [1, 2].map((n) => ({ type: 'PROGRESS', agent_id: 'bench', message: `event ${n}`, payload: null, dedupe_key: null })) }));
    const startedAt = performance.now();
    await pool.query('select count(*) from append_task_event_batch($1::jsonb, $2::bigint, false)', [JSON.stringify(entries), Date.now()]);
    perBatchMs.push(performance.now() - startedAt);
  }
  return perBatchMs;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const adminUrl = process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Pool({ connectionString: adminUrl, max: 1 });
  const name = `bench_stream_end_${randomUUID().slice(0, 8)}`;
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const { db } = createDatabase(url.toString(), { size: 1, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  try {
    await migrateToLatest(db);
    const sessionId = randomUUID();
    await pool.query('insert into sessions (id, tenant_id, user_id, token_budget) values ($1, $2, $3, 1000000)', [sessionId, TENANT, USER]);
    const taskIds = Array.from({ length: TASKS }, () => randomUUID());
    await pool.query(`insert into tasks (id, tenant_id, user_id, session_id, query, status)
      select id, $2, $3, $4, 'bench', 'RUNNING' from unnest($1::uuid[]) as id`, [taskIds, TENANT, USER, sessionId]);
    const versions = { guarded: await storeFunctionOf('0021_no_events_after_stream_end.sql'), unguarded: await storeFunctionOf('0014_grouped_event_appends.sql') };
    const samples: Record<keyof typeof versions, number[]> = { guarded: [], unguarded: [] };
    await timeRound(pool, taskIds); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const version of (round % 2 === 0 ? ['guarded', 'unguarded'] : ['unguarded', 'guarded']) as Array<keyof typeof versions>) {
        await pool.query(versions[version]);
        samples[version].push(...await timeRound(pool, taskIds));
      }
    }
    for (const [version, values] of Object.entries(samples)) {
      const ms = median(values);
      console.log(`${version}: median ${ms.toFixed(3)} ms per batch of ${TASKS * 2} events (${(ms * 1000 / (TASKS * 2)).toFixed(1)} µs per event), ${values.length} batches`);
    }
  } finally {
    await pool.end();
    await db.destroy();
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  }
}

await main();
