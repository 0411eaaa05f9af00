import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

export interface WindowCount {
  count: number;
  /** Unix seconds when the window ends. */
  resetAt: number;
}

/**
 * Counts one hit in the current fixed window of `key`, atomically in Postgres, so every process
 * sharing the database sees the same count (spec 8: rate limits held exactly across processes).
 */
export async function countHit(db: Db, key: string, windowSeconds: number, amount = 1, nowMs = Date.now()): Promise<WindowCount> {
  const windowStart = Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;
  const { rows } = await sql<{ count: number }>`
    insert into rate_limit_windows (key, window_start, count) values (${key}, ${windowStart}, ${amount})
    on conflict (key, window_start) do update set count = rate_limit_windows.count + ${amount}
    returning count`.execute(db);
  return { count: rows[0].count, resetAt: windowStart + windowSeconds };
}

/** The current count without adding a hit. */
export async function peekHits(db: Db, key: string, windowSeconds: number, nowMs = Date.now()): Promise<number> {
  const windowStart = Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;
  const row = await db.selectFrom('rate_limit_windows').select('count').where('key', '=', key).where('window_start', '=', windowStart).executeTakeFirst();
  return row?.count ?? 0;
}

export async function purgeOldWindows(db: Db, olderThanSeconds = 3600): Promise<void> {
  await sql`delete from rate_limit_windows where window_start < ${Math.floor(Date.now() / 1000) - olderThanSeconds}`.execute(db);
}
