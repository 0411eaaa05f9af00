import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64 (the library's format). */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export interface SigningSecrets {
  secret: string;
  /** A rotated-out secret still within its grace period. */
  previousSecret?: string;
}

/**
 * The three headers of one attempt (Standard Webhooks): its id (the same at every attempt of the event), the
 * attempt's time, and a signature by each secret in force, space-separated, so a receiver still holding the old
 * secret verifies the message during a rotation.
 */
export function signedHeaders(messageId: string, at: Date, body: string, secrets: SigningSecrets): Record<string, string> {
  const signatures = [secrets.secret, secrets.previousSecret]
    .filter((secret): secret is string => secret !== undefined)
    .map((secret) => new Webhook(secret).sign(messageId, at, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
