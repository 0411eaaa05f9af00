import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { conflict, notFound } from '../errors.ts';
import { findSubscription, now } from './queries.ts';
import type { WebhookDeliveryStatus } from '../db/schema.ts';
import { refuseUnlessAdmin } from './subscriptions.ts';

/** The subscription's deliveries, newest first, each with its attempts in order. */
export async function listDeliveries(deps: Deps, caller: Caller, id: string, query: { status?: WebhookDeliveryStatus; limit?: number }) {
  refuseUnlessAdmin(caller);
  await findSubscription(deps.db, caller, id);
  let select = deps.db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', id);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit ?? 50).execute();
  const attempts = rows.length === 0 ? [] : await deps.db.selectFrom('webhook_attempts').selectAll()
    .where('delivery_id', 'in', rows.map((row) => row.id)).orderBy('attempt').execute();
  return {
    deliveries: rows.map((row) => ({
      id: row.id,
      event_type: row.event_type,
      status: row.status,
      round: row.round,
      next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
      last_error: row.last_error,
      created_at: row.created_at.toISOString(),
      finished_at: row.finished_at?.toISOString() ?? null,
      payload: JSON.parse(row.body) as unknown,
      attempts: attempts.filter((attempt) => attempt.delivery_id === row.id).map((attempt) => ({
        attempt: attempt.attempt, round: attempt.round, started_at: attempt.started_at.toISOString(),
        duration_ms: attempt.duration_ms, status_code: attempt.status_code, error: attempt.error,
      })),
    })),
  };
}

/**
 * Sends a delivery that failed (or was abandoned) again, as a new round of attempts with the same body and
 * webhook-id; the next pick-up starts its workflow.
 */
export async function replayDelivery(deps: Deps, caller: Caller, id: string, deliveryId: string) {
  refuseUnlessAdmin(caller);
  const subscription = await findSubscription(deps.db, caller, id);
  const delivery = await deps.db.selectFrom('webhook_deliveries').select(['status']).where('id', '=', deliveryId).where('subscription_id', '=', id).executeTakeFirst();
  if (!delivery) throw notFound('Delivery not found');
  if (!subscription.enabled) throw conflict('webhook is disabled: enable it before replaying a delivery');
  const replayed = await deps.db.updateTable('webhook_deliveries')
    .set({ status: 'pending', round: sql`round + 1` as never, last_error: null, finished_at: null, next_attempt_at: now() })
    .where('id', '=', deliveryId).where('status', 'in', ['failed', 'abandoned'])
    .returning(['id', 'status', 'round']).executeTakeFirst();
  if (!replayed) throw conflict(`cannot replay a ${delivery.status} delivery`);
  return replayed;
}
