import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import { newWebhookSecret } from './webhook-secret.ts';
import { TASK_WEBHOOK_EVENTS } from './webhook-events.ts';

const TASK_WEBHOOK_DESCRIPTION = 'made by the task\'s webhook_url';

export interface TaskWebhook { id: string; secret: string }

/**
 * A submission's `webhook_url`: a subscription to every event of that task alone, written in the transaction that
 * writes the task (so no event of the task can precede it). A retried submission of the same task gets the same one.
 * Its secret is returned once, with the submission's answer.
 */
export async function addTaskWebhook(transaction: Db, caller: Caller, taskId: string, url: string): Promise<TaskWebhook> {
  await sql`
    insert into webhook_subscriptions (id, tenant_id, user_id, url, events, task_id, task_webhook, secret, description)
    values (${randomUUID()}, ${caller.tenantId}, ${caller.userId}, ${url}, ${[...TASK_WEBHOOK_EVENTS]}, ${taskId}, true, ${newWebhookSecret()}, ${TASK_WEBHOOK_DESCRIPTION})
    on conflict (task_id) where task_webhook do nothing`.execute(transaction);
  return transaction.selectFrom('webhook_subscriptions').select(['id', 'secret'])
    .where('task_id', '=', taskId).where('task_webhook', '=', true).executeTakeFirstOrThrow();
}
