import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** No run is due while a schedule is paused: next_run_at is null until it resumes. */
const paused = (reason: string | null) => ({
  status: 'PAUSED' as const, paused_at: sql`now()` as never, pause_reason: reason, next_run_at: null, updated_at: sql`now()` as never,
});

/**
 * Pauses an active schedule. False when it is already paused or deleted. Used by the pause route, by a run that
 * ran out of budget, and by a run whose owner or key can no longer act.
 */
export async function markSchedulePaused(db: Db, scheduleId: string, reason: string | null): Promise<Date | undefined> {
  const row = await db.updateTable('schedules').set(paused(reason))
    .where('id', '=', scheduleId).where('status', '=', 'ACTIVE').where('deleted_at', 'is', null)
    .returning('paused_at')
    .executeTakeFirst();
  return row?.paused_at ?? undefined;
}

/** Pauses every active schedule that runs as the API key (when the key is revoked). */
export async function pauseSchedulesOfKey(db: Db, apiKeyId: string, reason: string): Promise<void> {
  await db.updateTable('schedules').set(paused(reason))
    .where('api_key_id', '=', apiKeyId).where('status', '=', 'ACTIVE').where('deleted_at', 'is', null)
    .execute();
}
