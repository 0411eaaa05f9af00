import { sql } from 'kysely';
import type { Db } from './database.ts';
import { isWriteRefused } from './database-errors.ts';

/**
 * The writes this process saw the database refuse (read-only, out of disk), so that readiness tells the truth
 * while every read still answers. Only the most recent matters.
 */
export interface WriteRefusals {
  note(error: unknown): void;
  /** What the last refusal said, if it came within the last `withinMs`. */
  recent(withinMs: number): string | undefined;
}

export function createWriteRefusals(now: () => number = Date.now): WriteRefusals {
  let last: { at: number; message: string } | undefined;
  return {
    note(error) {
      if (isWriteRefused(error)) last = { at: now(), message: error instanceof Error ? error.message : String(error) };
    },
    recent(withinMs) {
      return last !== undefined && now() - last.at <= withinMs ? last.message : undefined;
    },
  };
}

/**
 * Fails as a write would when the server accepts none (read-only, a standby) yet changes nothing: Postgres checks
 * a read-only transaction before it looks for rows, and `where false` finds none.
 */
export async function checkWritable(db: Db): Promise<void> {
  await sql`update executors set heartbeat_at = heartbeat_at where false`.execute(db);
}
