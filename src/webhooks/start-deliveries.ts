import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { enqueueBackgroundWorkflow } from '../engine/engine.ts';
import type { WebhookDeliveryWorkflow } from './deliver-webhook.ts';

const BATCH = 100;

/**
 * Enqueues a durable workflow for each round of a delivery that has none yet: the deliveries the database enqueued
 * with their events (migration 0030) and the replays. Rows are taken under a lock that other workers skip, and
 * marked started in the same transaction; a crash before the commit leaves them to the next pick-up, whose start
 * under the same workflow id is a no-op if the first got as far as the engine.
 */
export async function startPendingDeliveries(deps: Deps, workflow: WebhookDeliveryWorkflow): Promise<void> {
  await deps.db.transaction().execute(async (transaction) => {
    const rows = await transaction.selectFrom('webhook_deliveries').select(['id', 'round'])
      .where('status', '=', 'pending').where(sql<boolean>`started_round is distinct from round`)
      .orderBy('created_at').limit(BATCH).forUpdate().skipLocked()
      .execute();
    for (const row of rows) await enqueueBackgroundWorkflow(workflow, `webhook:${row.id}:${row.round}`, row.id, row.round);
    if (rows.length === 0) return;
    await transaction.updateTable('webhook_deliveries').set({ started_round: sql`round` as never })
      .where('id', 'in', rows.map((row) => row.id)).execute();
  });
}
