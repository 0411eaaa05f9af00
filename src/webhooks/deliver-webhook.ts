import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { isDisplaced, registerDurableWorkflow, runDurableStep, sleepDurably } from '../engine/engine.ts';
import { webhookAttempts } from '../observability/metrics.ts';
import { guardedFetch } from '../tools/network/guarded-fetch.ts';
import { now, type SubscriptionRow } from './queries.ts';
import { signedHeaders } from './webhook-secret.ts';

/** A receiver's answer is read only this far (it is recorded for nobody; a receiver needs to say only its status). */
const ANSWER_MAX_BYTES = 16 * 1024;

type AttemptOutcome = 'retry' | 'finished';

export type WebhookDeliveryWorkflow = (deliveryId: string, round: number) => Promise<void>;

/**
 * One round of a delivery as a durable workflow: an attempt, and after a failure a durable sleep of the next delay
 * of WEBHOOK_RETRY_DELAYS_MS, then another, until one succeeds or the delays run out. A crash (even kill -9)
 * resumes it where it was when the engine recovers it: a finished attempt is not made again, and a sleep goes on
 * for what is left of it. An attempt cut by a crash before it was recorded is made again, as a retry: every
 * attempt carries the same webhook-id, so the receiver can tell.
 */
export function registerWebhookDelivery(deps: Deps): WebhookDeliveryWorkflow {
  return registerDurableWorkflow('webhook-delivery', async (deliveryId: string, round: number) => {
    const delays = deps.config.webhooks.retryDelaysMs;
    for (let attempt = 0; ; attempt++) {
      const outcome = await runDurableStep(`attempt-${attempt}`, () => attemptDelivery(deps, deliveryId, round, delays[attempt]))
        .catch((error: unknown) => attemptBroke(deps, deliveryId, error));
      if (outcome === 'finished') return;
      if (delays[attempt] === undefined) {
        await runDurableStep('give-up', () => failDelivery(deps, deliveryId, 'the last attempt could not be made or recorded', false));
        return;
      }
      await sleepDurably(delays[attempt]);
    }
  });
}

/**
 * An attempt that failed on our side (the database refused a read or a write) counts as a failed attempt: the round
 * goes on to its next one rather than ending with the delivery still pending, which nothing would start again.
 */
function attemptBroke(deps: Deps, deliveryId: string, error: unknown): AttemptOutcome {
  if (isDisplaced(error)) throw error;
  deps.logger.error({ err: error, delivery_id: deliveryId }, 'webhook attempt broke; it counts as failed');
  return 'retry';
}

async function attemptDelivery(deps: Deps, deliveryId: string, round: number, nextDelayMs: number | undefined): Promise<AttemptOutcome> {
  const delivery = await deps.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirst();
  if (!delivery || delivery.status !== 'pending' || delivery.round !== round) return 'finished';
  const subscription = await deps.db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', delivery.subscription_id).executeTakeFirstOrThrow();
  if (!subscription.enabled || subscription.deleted_at !== null) {
    await finishDelivery(deps, deliveryId, 'abandoned', subscription.deleted_at ? 'the webhook was deleted' : `the webhook is disabled: ${subscription.disabled_reason ?? ''}`);
    return 'finished';
  }
  const startedAt = new Date();
  const answer = await postSigned(deps, subscription, deliveryId, delivery.body, startedAt);
  await recordAttempt(deps, deliveryId, round, startedAt, answer);
  const delivered = answer.statusCode !== undefined && answer.statusCode >= 200 && answer.statusCode < 300;
  webhookAttempts.inc({ outcome: delivered ? 'delivered' : 'failed' });
  const log = { delivery_id: deliveryId, webhook_id: subscription.id, event: delivery.event_type, status_code: answer.statusCode, error: answer.error };
  if (delivered) {
    await finishDelivery(deps, deliveryId, 'succeeded', null);
    deps.logger.info(log, 'webhook delivered');
    return 'finished';
  }
  const error = answer.error ?? `the receiver answered ${answer.statusCode}`;
  // 410 Gone: the receiver says the endpoint is no more (Standard Webhooks: stop sending to it).
  if (answer.statusCode === 410 || nextDelayMs === undefined) {
    await failDelivery(deps, deliveryId, error, answer.statusCode === 410);
    deps.logger.warn(log, 'webhook delivery failed; subscription disabled');
    return 'finished';
  }
  await deps.db.updateTable('webhook_deliveries')
    .set({ last_error: error, next_attempt_at: sql`now() + make_interval(secs => ${nextDelayMs / 1000})` as never })
    .where('id', '=', deliveryId).execute();
  deps.logger.info({ ...log, retry_in_ms: nextDelayMs }, 'webhook attempt failed; retrying');
  return 'retry';
}

interface Answer { statusCode?: number; error?: string; durationMs: number }

/**
 * One signed POST. The URL goes through the tools' network guard again (resolved now, connected to the address
 * checked): a name that has come to resolve to a private address since the subscription was made is refused,
 * and the refusal is recorded as the attempt's error.
 */
async function postSigned(deps: Deps, subscription: SubscriptionRow, messageId: string, body: string, at: Date): Promise<Answer> {
  const previousInForce = subscription.previous_secret !== null && (subscription.previous_secret_expires_at?.getTime() ?? 0) > at.getTime();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'agentgate-webhooks',
    ...signedHeaders(messageId, at, body, { secret: subscription.secret, ...(previousInForce ? { previousSecret: subscription.previous_secret! } : {}) }),
  };
  const network = { ...deps.config.network, fetchTimeoutMs: deps.config.webhooks.timeoutMs, fetchMaxBytes: ANSWER_MAX_BYTES };
  const started = performance.now();
  try {
    const response = await guardedFetch(subscription.url, { network, method: 'POST', headers, body });
    return { statusCode: response.status, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    // The guard names the tools' time limit; a delivery's is its own.
    const message = (error as Error).message.replace('(TOOLS_FETCH_TIMEOUT_MS)', '(WEBHOOK_TIMEOUT_MS)');
    return { error: message.slice(0, 1000), durationMs: Math.round(performance.now() - started) };
  }
}

async function recordAttempt(deps: Deps, deliveryId: string, round: number, startedAt: Date, answer: Answer): Promise<void> {
  await sql`
    insert into webhook_attempts (delivery_id, attempt, round, started_at, duration_ms, status_code, error)
    select ${deliveryId}, coalesce(max(attempt), 0) + 1, ${round}, ${startedAt}, ${answer.durationMs}, ${answer.statusCode ?? null}, ${answer.error ?? null}
    from webhook_attempts where delivery_id = ${deliveryId}`.execute(deps.db);
}

async function finishDelivery(deps: Deps, deliveryId: string, status: 'succeeded' | 'failed' | 'abandoned', error: string | null): Promise<void> {
  await deps.db.updateTable('webhook_deliveries')
    .set({ status, last_error: error, next_attempt_at: null, finished_at: now() })
    .where('id', '=', deliveryId).execute();
}

/** The delivery has failed for good, and the subscription that keeps failing is disabled, saying why. */
async function failDelivery(deps: Deps, deliveryId: string, error: string, gone: boolean): Promise<void> {
  await finishDelivery(deps, deliveryId, 'failed', error);
  const reason = gone ? 'the receiver answered 410 Gone' : `a delivery failed at every attempt (last: ${error})`;
  await sql`
    update webhook_subscriptions s set enabled = false, disabled_reason = ${reason}, updated_at = now()
    from webhook_deliveries d where d.id = ${deliveryId} and s.id = d.subscription_id and s.enabled`.execute(deps.db);
}
