import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { createMemoryAdmission, holdQueueWhileRefused, type QueuePoller } from '../../../src/engine/memory-admission.ts';

const MIB = 1024 * 1024;

test('the admission refuses at and above the limit and admits again below it', () => {
  let rss = 100 * MIB;
  let clock = 0;
  const admission = createMemoryAdmission(128, () => rss, () => clock);
  assert.equal(admission.admits(), true);
  rss = 128 * MIB;
  clock += 100;
  assert.equal(admission.admits(), false);
  rss = 127 * MIB;
  clock += 100;
  assert.equal(admission.admits(), true);
});

test('one reading of the memory answers for a tenth of a second', () => {
  let readings = 0;
  let clock = 0;
  const admission = createMemoryAdmission(128, () => { readings += 1; return readings === 1 ? 100 * MIB : 200 * MIB; }, () => clock);
  assert.equal(admission.admits(), true);
  clock += 99;
  assert.equal(admission.admits(), true, 'the first reading still answers');
  assert.equal(readings, 1);
  clock += 1;
  assert.equal(admission.admits(), false, 'a new reading, over the limit');
  assert.equal(readings, 2);
});

test('the task queue is not polled while the admission refuses; other queues are; polling resumes once it admits', async () => {
  const polled: string[] = [];
  const poller: QueuePoller = { pollQueue: async (_exec, queue) => { polled.push(queue.name); return true; } };
  let admits = false;
  assert.equal(holdQueueWhileRefused('tasks', { admits: () => admits }, pino({ level: 'silent' }), poller), true);
  assert.equal(await poller.pollQueue({}, { name: 'tasks' }), false);
  assert.equal(await poller.pollQueue({}, { name: 'background' }), true);
  assert.deepEqual(polled, ['background']);
  admits = true;
  assert.equal(await poller.pollQueue({}, { name: 'tasks' }), true);
  assert.deepEqual(polled, ['background', 'tasks']);
});

test('the engine\'s queue dispatcher is found (a new engine version that moved it fails here)', () => {
  const logger = pino({ level: 'silent' });
  // Wrapping with an admission that always admits changes nothing about how the queue is polled.
  assert.equal(holdQueueWhileRefused('agentgate-unit-test-queue', { admits: () => true }, logger), true);
});
