import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * Pauses an active schedule: no run is due while it is paused (next_run_at is null until it resumes). False
 * when it is already paused or deleted. Used by the pause route and by a run that ran out of budget.
 */
export async function markSchedulePaused(db: Db, scheduleId: string, reason: string | null): Promise<Date | undefined> {
  const paused = await db.updateTable('schedules')
    .set({ status: 'PAUSED', paused_at: sql`now()` as never, pause_reason: reason, next_run_at: null, updated_at: sql`now()` as never })
    .where('id', '=', scheduleId).where('status', '=', 'ACTIVE').where('deleted_at', 'is', null)
    .returning('paused_at')
    .executeTakeFirst();
  return paused?.paused_at ?? undefined;
}
