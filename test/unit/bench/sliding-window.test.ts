import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busiestWindow } from '../../../bench/providers/sliding-window.ts';

test('no moments: an empty window', () => {
  assert.equal(busiestWindow([], 60_000).count, 0);
});

test('a call every second for three minutes: 60 in any minute, not 61 (the window is half-open)', () => {
  const moments = Array.from({ length: 180 }, (_, index) => 1_000_000 + index * 1000);
  assert.deepEqual(busiestWindow(moments, 60_000), { count: 60, startAt: 1_000_000, endAt: 1_059_000 });
});

test('one call a millisecond early makes 61 in the minute that starts at the earliest of them', () => {
  const moments = Array.from({ length: 120 }, (_, index) => index * 1000);
  moments[60] -= 1;
  assert.deepEqual(busiestWindow(moments, 60_000), { count: 61, startAt: 0, endAt: 59_999 });
});

test('two bursts across a fixed minute\'s boundary count together, wherever the fixed windows fall', () => {
  const lateInOne = Array.from({ length: 60 }, (_, index) => 59_000 + index * 10);
  const earlyInNext = Array.from({ length: 60 }, (_, index) => 60_000 + index * 10);
  assert.deepEqual(busiestWindow([...earlyInNext, ...lateInOne], 60_000), { count: 120, startAt: 59_000, endAt: 60_590 });
});
