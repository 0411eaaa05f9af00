import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitHistory, uncoveredMessages } from '../../../src/workflows/memory/history-plan.ts';
import { readHistorySettings } from '../../../src/workflows/memory/history-settings.ts';
import type { HistoryMessage } from '../../../src/workflows/memory/session-history.ts';

/** `count` messages of `chars` characters each (chars / 4 tokens), alternating user and assistant. */
function conversation(count: number, chars: number): HistoryMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: String(index).padEnd(chars, '.'),
    position: { createdUs: 1000 + Math.floor(index / 2), taskId: `task-${Math.floor(index / 2)}`, part: index % 2 === 0 ? 0 : 1 },
  }));
}

const settings = readHistorySettings({ primers_count: 2, recents_count: 4 });
const labels = (messages: HistoryMessage[]) => messages.map((message) => Number.parseInt(message.content, 10));

test('keeps the first and last messages verbatim and puts the rest in the middle', () => {
  const split = splitHistory(conversation(12, 40), settings, 100, 4000);
  assert.deepEqual(labels(split.primers), [0, 1]);
  assert.deepEqual(labels(split.middle), [2, 3, 4, 5, 6, 7]);
  assert.deepEqual(labels(split.recents), [8, 9, 10, 11]);
});

test('when primers and recents alone exceed the target, primers and then the oldest recents join the middle', () => {
  // 12 messages of 400 tokens; the target leaves room for 3 of them besides the summary.
  const split = splitHistory(conversation(12, 1600), settings, 0, 3 * 400 + 64);
  assert.deepEqual(labels(split.primers), []);
  assert.deepEqual(labels(split.recents), [9, 10, 11]);
  assert.deepEqual(labels(split.middle), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
});

test('a stored summary covers the middle through its last message; later ones are still uncovered', () => {
  const middle = conversation(8, 10).slice(2, 6);
  assert.deepEqual(labels(uncoveredMessages(middle, middle[1].position)), [4, 5]);
  assert.deepEqual(labels(uncoveredMessages(middle, undefined)), [2, 3, 4, 5]);
});

test('use_case_preset picks a window shape; explicit context keys win', () => {
  assert.deepEqual(readHistorySettings({}), { windowSize: 50, primers: 5, recents: 15, triggerRatio: 0.8, targetRatio: 0.5 });
  assert.equal(readHistorySettings({ use_case_preset: 'debugging' }).windowSize, 75);
  assert.equal(readHistorySettings({ use_case_preset: 'debugging', history_window_size: 10 }).windowSize, 10);
  assert.equal(readHistorySettings({ compression_trigger_ratio: 0.6 }).triggerRatio, 0.6);
});
