import type pg from 'pg';

export interface DatabaseMark {
  /** The next transaction id: every transaction that writes takes one. */
  transactionId: bigint;
  walLsn: string;
}

export interface DatabaseWork {
  writeTransactions: number;
  walBytes: number;
}

/**
 * Where the database stands now. Unlike pg_stat_database, which backends flush up to seconds late, the
 * transaction id and WAL position are exact at once. The mark's own transaction counts as one write.
 */
export async function markDatabase(pool: pg.Pool): Promise<DatabaseMark> {
  const { rows: [row] } = await pool.query<{ transaction_id: string; wal_lsn: string }>(
    'select pg_current_xact_id()::text as transaction_id, pg_current_wal_lsn()::text as wal_lsn');
  return { transactionId: BigInt(row.transaction_id), walLsn: row.wal_lsn };
}

export async function databaseWorkBetween(pool: pg.Pool, before: DatabaseMark, after: DatabaseMark): Promise<DatabaseWork> {
  const { rows: [row] } = await pool.query<{ bytes: string }>('select pg_wal_lsn_diff($1, $2)::text as bytes', [after.walLsn, before.walLsn]);
  return { writeTransactions: Number(after.transactionId - before.transactionId) - 1, walBytes: Number(row.bytes) };
}

export interface WorkPerTask {
  writeTransactionsPerTask: number;
  walBytesPerTask: number;
}

export function perTask(work: DatabaseWork, tasks: number): WorkPerTask {
  return { writeTransactionsPerTask: work.writeTransactions / tasks, walBytesPerTask: work.walBytes / tasks };
}
