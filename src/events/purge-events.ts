import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

const BATCH = 10_000;

export interface RetentionPolicy {
  retentionDays: number;
  partialRetentionHours: number;
}

/**
 * Enforces event retention (spec 6.4, with the whole log kept rather than a ring): token deltas
 * after `partialRetentionHours`, everything else after `retentionDays`. Deletes in batches so a
 * large purge never holds long locks.
 */
export async function purgeExpiredEvents(db: Db, policy: RetentionPolicy): Promise<number> {
  let purged = 0;
  for (;;) {
    const { numAffectedRows } = await sql`
      delete from task_events where ctid in (
        select ctid from task_events
        where (type = 'LLM_PARTIAL' and created_at < now() - make_interval(hours => ${policy.partialRetentionHours}))
           or created_at < now() - make_interval(days => ${policy.retentionDays})
        limit ${BATCH})`.execute(db);
    const count = Number(numAffectedRows ?? 0);
    purged += count;
    if (count < BATCH) return purged;
  }
}
