import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { withOwnConnection } from './own-connection.ts';

/** A notification between two connections of one Postgres arrives in milliseconds. */
export const SESSION_CHECK_TIMEOUT_MS = 3_000;

export class NotSessionConnectionsError extends Error {
  constructor() {
    super('DATABASE_URL does not give connections that stay one Postgres session: a notification sent to a channel '
      + `another connection listens on did not arrive within ${SESSION_CHECK_TIMEOUT_MS / 1000} s. This is what a `
      + 'transaction-mode pooler does (PgBouncer with pool_mode = transaction). agentgate needs session connections '
      + '(live streams and the engine use LISTEN/NOTIFY, executor identities and the engine use session locks): point '
      + 'DATABASE_URL at PostgreSQL itself, or at a pooler in session mode.');
    this.name = 'NotSessionConnectionsError';
  }
}

/**
 * Refuses connections that are not sessions. Behind a transaction-mode pooler every transaction may run on another
 * server connection, and nothing fails outright: notifications go nowhere (tasks wait in the queue, streams wait
 * for their next poll), and a session lock stays with whichever server connection took it. A notification between
 * two connections is the cheapest sign.
 */
export async function assertSessionConnections(connectionString: string): Promise<void> {
  const channel = `agentgate_session_check_${randomUUID().replaceAll('-', '')}`;
  const config = { connectionString, application_name: 'agentgate-session-check' };
  const timeout = AbortSignal.timeout(SESSION_CHECK_TIMEOUT_MS);
  await withOwnConnection(config, (listener) => withOwnConnection(config, async (notifier) => {
    await listener.query(`LISTEN ${channel}`);
    const arrived = once(listener, 'notification', { signal: timeout });
    await notifier.query(`NOTIFY ${channel}`);
    await arrived.catch((error: unknown) => {
      throw timeout.aborted ? new NotSessionConnectionsError() : error;
    });
  }));
}
