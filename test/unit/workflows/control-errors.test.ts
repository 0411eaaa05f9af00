import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskCancelledError, TaskParkedError } from '../../../src/workflows/runtime/control-errors.ts';
import { TaskTimeoutError } from '../../../src/workflows/runtime/deadline.ts';

/** What the engine hands back for a step that threw: a plain Error carrying the name and message. */
function asRecorded(error: Error): Error {
  const recorded = new Error(error.message);
  recorded.name = error.name;
  return recorded;
}

test('control errors recognise their own instances, also as recorded by the engine, and nothing else', () => {
  const cancelled = new TaskCancelledError('pre_completion');
  assert.ok(TaskCancelledError.isInstance(cancelled));
  assert.ok(TaskCancelledError.isInstance(asRecorded(cancelled)));
  assert.ok(!TaskCancelledError.isInstance(new TaskParkedError('pre_completion')));
  assert.ok(TaskParkedError.isInstance(asRecorded(new TaskParkedError('budget'))));
  assert.ok(TaskTimeoutError.isInstance(asRecorded(new TaskTimeoutError(30))));
  assert.ok(!TaskTimeoutError.isInstance(new Error('task exceeded its time limit of 30 s')));
  assert.ok(!TaskCancelledError.isInstance('TaskCancelledError'));
});

test('a cancellation names the checkpoint where it was honoured, also once recorded', () => {
  assert.equal(TaskCancelledError.checkpointOf(new TaskCancelledError('pre_execution')), 'pre_execution');
  const recorded = asRecorded(new TaskCancelledError('in_flight'));
  assert.ok(TaskCancelledError.isInstance(recorded));
  assert.equal(TaskCancelledError.checkpointOf(recorded), 'in_flight');
});
