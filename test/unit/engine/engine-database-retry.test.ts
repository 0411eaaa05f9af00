import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { withDbRetry } from '@dbos-inc/dbos-sdk/internal/system_database';
import { DATABASE_RETRY_MAX_WAIT_MS } from '../../../src/db/retry.ts';
import { keepEngineRetriesShort } from '../../../src/engine/engine.ts';

/** The waits the engine's retry of a system-database operation takes while the database refuses `refusals` times. */
async function enginesWaits(refusals: number): Promise<number[]> {
  const waits: number[] = [];
  const realSetTimeout = globalThis.setTimeout;
  // Each wait is recorded and then skipped, so a minute of backoff takes no time here.
  const spy = mock.method(globalThis, 'setTimeout', (callback: () => void, ms: number) => {
    waits.push(ms);
    return realSetTimeout(callback, 0);
  });
  let attempts = 0;
  try {
    const outcome = await withDbRetry(async () => {
      if (++attempts <= refusals) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return 'recorded';
    });
    assert.equal(outcome, 'recorded');
  } finally {
    spy.mock.restore();
  }
  return waits;
}

test('the engine retries an unreachable database at most DATABASE_RETRY_MAX_WAIT_MS apart, as our own retries do, so an outage ends for a task within seconds of the return', async () => {
  keepEngineRetriesShort();
  const waits = await enginesWaits(12);
  assert.equal(waits.length, 12);
  assert.ok(Math.max(...waits) <= DATABASE_RETRY_MAX_WAIT_MS, `longest wait ${Math.max(...waits)} ms`);
  // Still a backoff: the first attempts come quickly, later ones spread out.
  assert.ok(waits[0] < 500, `first wait ${waits[0]} ms`);
  assert.ok(waits.slice(-3).every((wait) => wait >= DATABASE_RETRY_MAX_WAIT_MS / 4), waits.join(', '));
});
