import { sql, type Selectable } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { WebhookSubscriptionsTable } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { WebhookViewType } from './schemas.ts';

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;

export const WEBHOOK_NOT_FOUND = 'Webhook not found';

/** A live subscription of the caller's tenant; another tenant's does not exist for the caller. */
export async function findSubscription(db: Db, caller: Caller, id: string): Promise<SubscriptionRow> {
  const row = await db.selectFrom('webhook_subscriptions').selectAll()
    .where('id', '=', id).where('tenant_id', '=', caller.tenantId).where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw notFound(WEBHOOK_NOT_FOUND);
  return row;
}

export function toWebhookView(row: SubscriptionRow): WebhookViewType {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    task_id: row.task_id,
    session_id: row.session_id,
    description: row.description,
    task_webhook: row.task_webhook,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const now = () => sql<Date>`now()` as never;
