import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** Finished deliveries (and their attempts) are kept for WEBHOOK_DELIVERY_RETENTION_DAYS, to be listed and replayed. */
export async function purgeFinishedDeliveries(db: Db, retentionDays: number): Promise<void> {
  await db.deleteFrom('webhook_deliveries')
    .where('status', '<>', 'pending')
    .where('finished_at', '<', sql<Date>`now() - make_interval(days => ${retentionDays})`)
    .execute();
}
