import pg from 'pg';
import { serverStream } from './server-stream.ts';

/**
 * Runs `work` on a connection of its own, outside the pool (a session that LISTENs, holds a session lock or talks
 * to another database), and closes it whatever happens.
 */
export async function withOwnConnection<T>(config: pg.ClientConfig, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ stream: serverStream, ...config });
  // A lost connection also fails the query in flight; the event alone would end the process.
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}
