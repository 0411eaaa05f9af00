import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLeaseCertain } from '../../../src/tasks/executor-lease.ts';

const DEAD_AFTER_MS = 30_000;
const sent = { monotonic: 1_000, wall: 1_700_000_000_000 };
const later = (monotonicMs: number, wallMs: number) => ({ monotonic: sent.monotonic + monotonicMs, wall: sent.wall + wallMs });

test('ownership is certain only after a renewal that succeeded, for less than half the dead-after period', () => {
  assert.equal(isLeaseCertain(undefined, later(0, 0), DEAD_AFTER_MS), false, 'no renewal yet');
  assert.equal(isLeaseCertain(sent, later(5_000, 5_000), DEAD_AFTER_MS), true);
  assert.equal(isLeaseCertain(sent, later(14_999, 14_999), DEAD_AFTER_MS), true);
  assert.equal(isLeaseCertain(sent, later(15_000, 15_000), DEAD_AFTER_MS), false);
});

test('either clock running past half the period ends the certainty: a frozen process, a suspended machine', () => {
  assert.equal(isLeaseCertain(sent, later(40_000, 2_000), DEAD_AFTER_MS), false, 'the monotonic clock ran on (a stopped process)');
  assert.equal(isLeaseCertain(sent, later(2_000, 40_000), DEAD_AFTER_MS), false, 'the wall clock ran on (a suspended machine)');
});
