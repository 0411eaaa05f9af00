import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { tooManyRequests } from '../errors.ts';

export interface WindowCount {
  count: number;
  /** Unix seconds when the window ends. */
  resetAt: number;
}

export interface Window { key: string; windowSeconds: number; amount?: number }

/**
 * Counts one hit (or `amount`) in the current fixed window of each key, atomically and in one statement in
 * Postgres, so every process sharing the database sees the same counts (spec 8: rate limits held exactly
 * across processes). `nowMs` is the clock, for tests.
 */
export async function countHits(db: Db, windows: Window[], nowMs = Date.now()): Promise<WindowCount[]> {
  const starts = windows.map((window) => windowStart(window.windowSeconds, nowMs));
  const { rows } = await sql<{ key: string; count: number }>`
    insert into rate_limit_windows (key, window_start, count)
    select * from unnest(${windows.map((window) => window.key)}::text[], ${starts}::bigint[], ${windows.map((window) => window.amount ?? 1)}::int[])
    on conflict (key, window_start) do update set count = rate_limit_windows.count + excluded.count
    returning key, count`.execute(db);
  const counts = new Map(rows.map((row) => [row.key, row.count]));
  return windows.map((window, index) => ({ count: counts.get(window.key) ?? 0, resetAt: starts[index] + window.windowSeconds }));
}

export async function countHit(db: Db, key: string, windowSeconds: number, amount = 1, nowMs = Date.now()): Promise<WindowCount> {
  const [window] = await countHits(db, [{ key, windowSeconds, amount }], nowMs);
  return window;
}

/** Counts the hit and answers 429 (with Retry-After) once the window holds more than `limit`. */
export async function throttle(db: Db, key: string, windowSeconds: number, limit: number, message: string): Promise<WindowCount> {
  const window = await countHit(db, key, windowSeconds);
  if (window.count > limit) throw tooManyRequests(secondsUntilReset(window), message);
  return window;
}

/** The current count without adding a hit. */
export async function peekHits(db: Db, key: string, windowSeconds: number, nowMs = Date.now()): Promise<number> {
  const row = await db.selectFrom('rate_limit_windows').select('count').where('key', '=', key).where('window_start', '=', windowStart(windowSeconds, nowMs)).executeTakeFirst();
  return row?.count ?? 0;
}

/** Whole seconds until the window ends, at least one: the Retry-After of a refusal. */
export const secondsUntilReset = (window: WindowCount, nowMs = Date.now()) => Math.max(1, window.resetAt - Math.floor(nowMs / 1000));

const windowStart = (windowSeconds: number, nowMs: number) => Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;

export async function purgeOldWindows(db: Db, olderThanSeconds = 3600): Promise<void> {
  await sql`delete from rate_limit_windows where window_start < ${Math.floor(Date.now() / 1000) - olderThanSeconds}`.execute(db);
}
