/**
 * How a database error should be treated. Postgres reports a SQLSTATE (`code`); the driver reports lost
 * or refused connections as Node errors or plain messages. Both are looked for along the `cause` chain,
 * since Kysely and our own code wrap errors.
 */

/** Deadlock or serialization failure: Postgres rolled the transaction back, so running it again is safe. */
const CONFLICT_CODES = new Set(['40P01', '40001']);
/** Connection exceptions (08), insufficient resources (53), operator intervention (57: shutdown, restart). */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57']);
/**
 * A write refused because the server accepts no writes for now: a read-only transaction (25006), which is what a
 * failover to a standby, a provider's storage-full switch or `default_transaction_read_only` give. Like a lost
 * connection, it passes: the work waits and runs again rather than fail.
 */
const READ_ONLY_CODES = new Set(['25006']);
/** A statement cancelled by statement_timeout or by hand is 57014: a slow query, not a lost database. */
const QUERY_CANCELED = '57014';
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);
const UNAVAILABLE_MESSAGES = [
  'connection terminated', 'server closed the connection', 'timeout exceeded when trying to connect',
  'query read timeout', 'client has encountered a connection error', 'connection timeout', 'cannot use a pool after calling end',
  'client was closed and is not queryable',
  // A hot standby refuses some writes with an internal error rather than 25006.
  'during recovery',
  // A statement prepared by name (database.ts) whose result columns another process's migration changed: the
  // connection is discarded and the statement, run again on a fresh one, is prepared anew.
  'cached plan must not change result type',
];
/** A named statement the connection no longer holds (a pooler that resets sessions): run again, it is prepared anew. */
const STALE_STATEMENT_CODE = '26000';

/** The transaction lost a deadlock or serialization race and may simply be run again. */
export function isTransientConflict(error: unknown): boolean {
  return causes(error).some((cause) => CONFLICT_CODES.has(codeOf(cause)));
}

/**
 * The database could not be reached, went away mid-statement, or refuses writes for now (read-only, disk full):
 * a condition that passes. Whether a statement that lost its connection committed is unknown.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return causes(error).some((cause) => {
    const code = codeOf(cause);
    if (code === QUERY_CANCELED) return false;
    if (READ_ONLY_CODES.has(code) || code === STALE_STATEMENT_CODE) return true;
    if (code.length === 5 && UNAVAILABLE_CLASSES.has(code.slice(0, 2))) return true;
    if (UNAVAILABLE_ERRNOS.has(code)) return true;
    const message = cause instanceof Error ? cause.message.toLowerCase() : '';
    return UNAVAILABLE_MESSAGES.some((text) => message.includes(text));
  });
}

/** The server refuses writes for now: read-only (a standby, a storage-full switch) or out of disk or memory (class 53). */
export function isWriteRefused(error: unknown): boolean {
  return causes(error).some((cause) => {
    const code = codeOf(cause);
    return READ_ONLY_CODES.has(code) || code.startsWith('53') || (cause instanceof Error && cause.message.includes('during recovery'));
  });
}

/** A statement ended by `statement_timeout` (or the driver's own query timeout, which discards the connection). */
export function isQueryTimeout(error: unknown): boolean {
  return causes(error).some((cause) => codeOf(cause) === QUERY_CANCELED);
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < 8; current = (current as { cause?: unknown }).cause) {
    chain.push(current);
    if (current instanceof AggregateError) chain.push(...current.errors);
  }
  return chain;
}
