import pg from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { isDatabaseUnavailable } from './database-errors.ts';
import type { Database } from './schema.ts';
import { createWriteRefusals, type WriteRefusals } from './write-refusals.ts';
import { serverStream } from './server-stream.ts';
import { clientNaming, createStatementNames } from './statement-names.ts';

export type Db = Kysely<Database>;

// bigint columns (counts, sums) come back as strings by default; our values fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * A session left idle inside a transaction is ended after this long, and its locks with it. Our transactions do
 * database work only and last milliseconds; one left open is a process frozen or cut off mid-transaction, whose
 * row locks would otherwise hold up every request on those rows (a cancel, the worker that took its tasks over)
 * for as long as this, well past DB_QUERY_TIMEOUT_MS.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 5_000;

export interface PoolOptions {
  size: number;
  /** A statement (and the wait for its answer) that takes longer fails; a frozen database cannot hang a request. */
  queryTimeoutMs: number;
  /** Opening a connection, or waiting for a free one, fails after this long. */
  connectTimeoutMs: number;
  /** Statements sent often are prepared by name on each connection (default true; off behind a pooler that cannot keep them). */
  namedStatements?: boolean;
}

export function createDatabase(connectionString: string, options: PoolOptions): { db: Db; pool: pg.Pool; writeRefusals: WriteRefusals } {
  const pool = new pg.Pool({
    connectionString,
    stream: serverStream,
    ...(options.namedStatements === false ? {} : { Client: clientNaming(createStatementNames()) }),
    max: options.size,
    application_name: 'agentgate',
    connectionTimeoutMillis: options.connectTimeoutMs,
    statement_timeout: options.queryTimeoutMs,
    // The server-side limit ends slow statements; this one covers a server that does not answer at all.
    query_timeout: options.queryTimeoutMs + 1_000,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    keepAlive: true,
  });
  survivingLostConnections(pool);
  const writeRefusals = createWriteRefusals();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: discardingBrokenClients(pool, writeRefusals) }) });
  return { db, pool, writeRefusals };
}

/**
 * A lost connection is reported as an 'error' event, which ends the process when nobody listens: an idle client
 * reports to its pool; a checked-out one between statements to its own listeners, which its borrower may not
 * have attached, or may have taken off before giving it back (the engine's pool did, under sessions cut again and
 * again). So every client of the pool keeps a listener for as long as it lives; the statement in flight, if any,
 * fails on its own and its caller handles that.
 */
export function survivingLostConnections(pool: pg.Pool, onLost: (error: Error) => void = () => {}): pg.Pool {
  pool.on('error', onLost);
  pool.on('connect', (client) => client.on('error', onLost));
  return pool;
}

/**
 * A client whose statement timed out may still be waiting for the answer, and one whose connection broke
 * is useless: both leave the pool when released instead of serving the next caller. So does one whose writes
 * were refused: a session opened while the database was read-only stays read-only after it is writable again.
 */
function discardingBrokenClients(pool: pg.Pool, writeRefusals: WriteRefusals): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let broken: Error | undefined;
      const query = (text: string, parameters: readonly unknown[]) => client.query(text, [...parameters]).catch((error: Error) => {
        if (isDatabaseUnavailable(error)) broken = error;
        writeRefusals.note(error);
        throw error;
      });
      return { query, release: () => client.release(broken) } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
