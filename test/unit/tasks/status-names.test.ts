import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../../src/errors.ts';
import { parseStatusFilter, toExecutionModeName, toStatusName } from '../../../src/tasks/status-names.ts';

test('status filters accept short forms, the CANCELED alias and prefixed forms', () => {
  assert.equal(parseStatusFilter('CANCELED'), 'CANCELLED');
  assert.equal(parseStatusFilter('completed'), 'COMPLETED');
  assert.equal(parseStatusFilter('TASK_STATUS_TIMEOUT'), 'TIMEOUT');
  assert.throws(() => parseStatusFilter('DONE'), (error: unknown) => error instanceof AppError && error.statusCode === 400);
});

test('responses use the prefixed forms', () => {
  assert.equal(toStatusName('QUEUED'), 'TASK_STATUS_QUEUED');
  assert.equal(toExecutionModeName('simple'), 'EXECUTION_MODE_SIMPLE');
  assert.equal(toExecutionModeName(null), null);
});
