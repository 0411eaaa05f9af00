import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDatabaseUnavailable, isQueryTimeout, isTransientConflict, isWriteRefused } from '../../../src/db/database-errors.ts';

const withCode = (code: string, message = 'error') => Object.assign(new Error(message), { code });

test('deadlocks and serialization failures are conflicts worth running again', () => {
  assert.ok(isTransientConflict(withCode('40P01', 'deadlock detected')));
  assert.ok(isTransientConflict(withCode('40001')));
  assert.ok(isTransientConflict(new Error('wrapped', { cause: withCode('40P01') })));
  assert.equal(isTransientConflict(withCode('23505', 'duplicate key')), false);
});

test('lost, refused and restarting connections make the database unavailable', () => {
  for (const error of [
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('57P03', 'the database system is starting up'),
    withCode('08006'),
    withCode('53300', 'too many connections'),
    withCode('ECONNREFUSED'),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Query read timeout'),
    new Error('query failed', { cause: withCode('ECONNRESET') }),
    new AggregateError([withCode('ECONNREFUSED')]),
  ]) assert.ok(isDatabaseUnavailable(error), String(error));
});

test('writes refused for now (read-only, a standby, disk full) pass like an outage, and are told apart from a lost connection', () => {
  const refused = [
    withCode('25006', 'cannot execute INSERT in a read-only transaction'),
    new Error('wrapped', { cause: withCode('25006') }),
    withCode('53100', 'could not extend file "base/16384/16385": No space left on device'),
    withCode('XX000', 'cannot assign TransactionIds during recovery'),
  ];
  for (const error of refused) {
    assert.ok(isDatabaseUnavailable(error), String(error));
    assert.ok(isWriteRefused(error), String(error));
  }
  for (const error of [withCode('57P01'), withCode('ECONNREFUSED'), withCode('23505'), withCode('25P02', 'current transaction is aborted')]) {
    assert.equal(isWriteRefused(error), false, String(error));
  }
});

test('a query cancelled by statement_timeout is a timeout, not an outage; errors of the request are neither', () => {
  assert.equal(isDatabaseUnavailable(withCode('57014', 'canceling statement due to statement timeout')), false);
  assert.ok(isQueryTimeout(withCode('57014')));
  for (const error of [withCode('23503', 'foreign key violation'), withCode('22P02'), new TypeError('x is undefined'), undefined, null, 'text']) {
    assert.equal(isDatabaseUnavailable(error), false);
    assert.equal(isTransientConflict(error), false);
  }
});
