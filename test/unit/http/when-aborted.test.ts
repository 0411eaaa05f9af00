import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { whenAborted } from '../../../src/http/when-aborted.ts';

test('callbacks watching one signal share one listener and each runs once, unless it stopped watching', () => {
  const controller = new AbortController();
  const calls: string[] = [];
  const stops = ['a', 'b', 'c', 'd'].map((name) => whenAborted(controller.signal, () => calls.push(name)));
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
  stops[1]();
  stops[1]();
  controller.abort();
  controller.abort();
  assert.deepEqual(calls, ['a', 'c', 'd']);
  stops[0]();
  assert.deepEqual(calls, ['a', 'c', 'd'], 'stopping after the abort changes nothing');
});

test('a signal already aborted calls back at once', () => {
  let calls = 0;
  const stop = whenAborted(AbortSignal.abort(), () => { calls += 1; });
  assert.equal(calls, 1);
  stop();
  assert.equal(calls, 1);
});

test('the same function watched twice is called twice', () => {
  const controller = new AbortController();
  let calls = 0;
  const count = () => { calls += 1; };
  whenAborted(controller.signal, count);
  whenAborted(controller.signal, count);
  controller.abort();
  assert.equal(calls, 2);
});

test('a callback that throws keeps none of the others from running, and its error surfaces as a listener\'s would', () => {
  // In a process of its own: the error ends up uncaught, as an abort listener's does.
  const script = `
    import { whenAborted } from ${JSON.stringify(pathToFileURL(path.resolve(import.meta.dirname, '../../../src/http/when-aborted.ts')).href)};
    const controller = new AbortController();
    const calls = [];
    whenAborted(controller.signal, () => calls.push('first'));
    whenAborted(controller.signal, () => { throw new Error('one watcher failed'); });
    whenAborted(controller.signal, () => calls.push('last'));
    process.on('uncaughtException', (error) => { console.log(JSON.stringify({ calls, message: error.message })); });
    controller.abort();`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.deepEqual(JSON.parse(child.stdout), { calls: ['first', 'last'], message: 'one watcher failed' }, child.stderr);
});
