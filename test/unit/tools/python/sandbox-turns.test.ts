import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createSandboxTurns, type TurnLimits } from '../../../../src/tools/python/sandbox-turns.ts';

/** Calls that hold their turn until the test releases them; `started` lists them in the order their turns came. */
function harness(limits: Partial<TurnLimits> = {}) {
  const turns = createSandboxTurns({ max: 2, perTenant: 2, waitTimeoutMs: 60_000, ...limits });
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const take = (name: string, signal = new AbortController().signal) => turns.take(name.slice(0, 1), signal, () => {
    started.push(name);
    return new Promise<string>((resolve) => releases.set(name, () => resolve(name)));
  });
  const release = async (name: string) => {
    releases.get(name)!();
    await sleep(5);
  };
  return { turns, started, take, release };
}

describe('sandbox turns', () => {
  it('at most `max` calls hold a turn, and at most `perTenant` of them one tenant\'s', async () => {
    const { turns, started, take, release } = harness({ max: 3, perTenant: 2 });
    const calls = ['A1', 'A2', 'A3', 'B1', 'B2'].map((name) => take(name));
    await sleep(5);
    assert.deepEqual(started, ['A1', 'A2', 'B1']);
    assert.deepEqual(turns.counts(), { inUse: 3, waiting: 2 });
    for (const name of ['A1', 'A2', 'B1', 'A3', 'B2']) await release(name);
    await Promise.all(calls);
    assert.deepEqual(turns.counts(), { inUse: 0, waiting: 0 });
  });

  it('when a turn frees, the tenants that wait take turns: a long queue puts one call at most ahead of another tenant\'s', async () => {
    const { started, take, release } = harness();
    const calls = ['A1', 'A2', 'A3', 'A4', 'A5'].map((name) => take(name));
    await sleep(5);
    calls.push(take('B1'), take('C1'));
    await release('A1');
    await release('A2');
    assert.deepEqual(started, ['A1', 'A2', 'B1', 'C1'], 'B and C went before A\'s third call');
    await release('B1');
    await release('C1');
    assert.deepEqual(started, ['A1', 'A2', 'B1', 'C1', 'A3', 'A4']);
    for (const name of ['A3', 'A4', 'A5']) await release(name);
    assert.deepEqual(await Promise.all(calls), ['A1', 'A2', 'A3', 'A4', 'A5', 'B1', 'C1']);
  });

  it('a waiting call whose signal aborts leaves the queue at once with the reason and never runs', async () => {
    const { turns, started, take, release } = harness({ max: 1 });
    void take('A1');
    const controller = new AbortController();
    const waiting = take('B1', controller.signal);
    controller.abort(new Error('task cancelled'));
    await assert.rejects(waiting, /task cancelled/);
    assert.deepEqual(turns.counts(), { inUse: 1, waiting: 0 });
    await release('A1');
    assert.deepEqual(started, ['A1']);
  });

  it('a call that waits longer than the limit gives up saying so; a running call keeps its turn past the limit and past an abort', async () => {
    const { turns, started, take, release } = harness({ max: 1, waitTimeoutMs: 50 });
    const controller = new AbortController();
    const running = take('A1', controller.signal);
    const waiting = take('B1');
    await assert.rejects(waiting, /^Error: no Python sandbox was free within 0.05 s \(at most 1 run at once, 2 for one tenant\); try again later$/);
    controller.abort(new Error('task cancelled'));
    await sleep(20);
    assert.deepEqual(turns.counts(), { inUse: 1, waiting: 0 }, 'the turn is held until the call settles');
    void take('C1');
    await sleep(5);
    assert.deepEqual(started, ['A1']);
    await release('A1');
    assert.equal(await running, 'A1');
    assert.deepEqual(started, ['A1', 'C1']);
  });

  it('an aborted signal is refused before anything waits', async () => {
    const { turns, take } = harness();
    await assert.rejects(take('A1', AbortSignal.abort(new Error('gone'))), /gone/);
    assert.deepEqual(turns.counts(), { inUse: 0, waiting: 0 });
  });
});
