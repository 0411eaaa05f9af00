import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { isAdmin, type Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { forbidden, notFound } from '../errors.ts';
import { refuseUnsafeWebhookUrl } from './check-webhook-url.ts';
import { findSubscription, now, toWebhookView } from './queries.ts';
import type { CreateWebhookInput, UpdateWebhookInput } from './schemas.ts';
import { newWebhookSecret } from './webhook-secret.ts';

/** Webhooks send a tenant's data out of it: only its owners and admins manage them (issue 34). */
export function refuseUnlessAdmin(caller: Caller): void {
  if (!isAdmin(caller)) throw forbidden('Forbidden: only owners and admins manage webhooks');
}

export async function createWebhook(deps: Deps, caller: Caller, input: CreateWebhookInput) {
  refuseUnlessAdmin(caller);
  await refuseUnsafeWebhookUrl(deps.config.network, input.url);
  if (input.task_id !== undefined) await refuseForeignTask(deps, caller, input.task_id);
  const row = await deps.db.insertInto('webhook_subscriptions').values({
    id: randomUUID(), tenant_id: caller.tenantId, user_id: caller.userId, url: input.url, events: input.events,
    task_id: input.task_id ?? null, session_id: input.session_id ?? null, description: input.description ?? '',
    secret: newWebhookSecret(), previous_secret: null, previous_secret_expires_at: null, disabled_reason: null,
    created_at: now(), updated_at: now(), deleted_at: null,
  }).returningAll().executeTakeFirstOrThrow();
  return { ...toWebhookView(row), secret: row.secret };
}

async function refuseForeignTask(deps: Deps, caller: Caller, taskId: string): Promise<void> {
  const task = await deps.db.selectFrom('tasks').select('id').where('id', '=', taskId).where('tenant_id', '=', caller.tenantId).executeTakeFirst();
  if (!task) throw notFound('Task not found');
}

export async function listWebhooks(deps: Deps, caller: Caller) {
  refuseUnlessAdmin(caller);
  const rows = await deps.db.selectFrom('webhook_subscriptions').selectAll()
    .where('tenant_id', '=', caller.tenantId).where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(500)
    .execute();
  return { webhooks: rows.map(toWebhookView) };
}

export async function getWebhook(deps: Deps, caller: Caller, id: string) {
  refuseUnlessAdmin(caller);
  return toWebhookView(await findSubscription(deps.db, caller, id));
}

/** Changes what is given; `enabled: true` also clears why it was disabled. */
export async function updateWebhook(deps: Deps, caller: Caller, id: string, input: UpdateWebhookInput) {
  refuseUnlessAdmin(caller);
  await findSubscription(deps.db, caller, id);
  if (input.url !== undefined) await refuseUnsafeWebhookUrl(deps.config.network, input.url);
  const row = await deps.db.updateTable('webhook_subscriptions').set({
    ...(input.url === undefined ? {} : { url: input.url }),
    ...(input.events === undefined ? {} : { events: input.events }),
    ...(input.description === undefined ? {} : { description: input.description }),
    ...(input.enabled === undefined ? {} : { enabled: input.enabled, disabled_reason: input.enabled ? null : 'disabled by a user' }),
    updated_at: now(),
  }).where('id', '=', id).where('tenant_id', '=', caller.tenantId).returningAll().executeTakeFirstOrThrow();
  return toWebhookView(row);
}

/** Deleted subscriptions get no new events; their deliveries in flight stop at their next attempt. */
export async function deleteWebhook(deps: Deps, caller: Caller, id: string) {
  refuseUnlessAdmin(caller);
  await findSubscription(deps.db, caller, id);
  await deps.db.updateTable('webhook_subscriptions').set({ deleted_at: now(), enabled: false, updated_at: now() })
    .where('id', '=', id).where('tenant_id', '=', caller.tenantId).execute();
  return { success: true, message: 'Webhook deleted' };
}

/**
 * A new secret signs from now on; the one it replaces still signs too (a second signature in webhook-signature)
 * for WEBHOOK_SECRET_GRACE_SECONDS, so receivers can switch without refusing a delivery.
 */
export async function rotateWebhookSecret(deps: Deps, caller: Caller, id: string) {
  refuseUnlessAdmin(caller);
  await findSubscription(deps.db, caller, id);
  const row = await deps.db.updateTable('webhook_subscriptions').set({
    previous_secret: sql`secret` as never,
    previous_secret_expires_at: sql`now() + make_interval(secs => ${deps.config.webhooks.secretGraceSeconds})` as never,
    secret: newWebhookSecret(),
    updated_at: now(),
  }).where('id', '=', id).where('tenant_id', '=', caller.tenantId).returning(['secret', 'previous_secret_expires_at']).executeTakeFirstOrThrow();
  return { secret: row.secret, previous_secret_expires_at: row.previous_secret_expires_at!.toISOString() };
}
