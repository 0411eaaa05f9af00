import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startGateway, waitFor, type Gateway } from '../helpers/gateway.ts';

const KEYS = 400;
const CONCURRENCY = 50;

/** Sends each key's submission once, 50 at a time; returns the keys that got no 2xx answer. */
async function submitKeys(gateway: Gateway, keys: string[], answers: Map<string, Set<string>>): Promise<string[]> {
  const queue = [...keys];
  const failed: string[] = [];
  const worker = async () => {
    for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
      try {
        const answer = await gateway.request('POST', '/api/v1/tasks', { query: `burst ${key}` }, { 'Idempotency-Key': key });
        if (answer.status !== 200) {
          failed.push(key);
          continue;
        }
        const seen = answers.get(key) ?? new Set<string>();
        seen.add(answer.body.task_id);
        answers.set(key, seen);
      } catch {
        failed.push(key);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failed;
}

// Before: 1,049 tasks for 1,000 keys: the task row and the idempotency record were written apart, and an
// abandoned claim was taken over while its task existed.
test('kill -9 at random moments of a keyed burst, then retries: exactly one task per key', { timeout: 240_000 }, async (t) => {
  const gateway = await startGateway(t, { env: { IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: '2' } });
  const keys = Array.from({ length: KEYS }, (_, index) => `burst-${index}-${Date.now()}`);
  const answers = new Map<string, Set<string>>();

  let pending = keys;
  for (let crash = 0; crash < 2; crash++) {
    const burst = submitKeys(gateway, pending, answers);
    await sleep(150 + Math.random() * 600);
    await gateway.kill('SIGKILL');
    pending = await burst;
    await gateway.restart();
  }
  assert.ok(pending.length > 0, 'the crashes interrupted some submissions');
  await waitFor('every key to be answered', async () => {
    pending = await submitKeys(gateway, pending, answers);
    if (pending.length > 0) await sleep(500);
    return pending.length === 0 ? true : undefined;
  }, 60_000);

  // Once the claims of the dead requests have expired, every retry still names the same task.
  await sleep(2_500);
  assert.deepEqual(await submitKeys(gateway, keys, answers), []);
  for (const key of keys) assert.equal(answers.get(key)?.size, 1, `key ${key} named one task`);

  const { rows } = await gateway.sql.query(`select query, count(*)::int as count from tasks where query like 'burst %' group by query`);
  assert.equal(rows.length, KEYS, 'one task per key');
  assert.deepEqual(rows.filter((row) => row.count !== 1), [], 'no key has a second task');
  await waitFor('every task to finish', async () => {
    const { rows: unfinished } = await gateway.sql.query(`select count(*)::int as count from tasks where query like 'burst %' and status <> 'COMPLETED'`);
    return unfinished[0].count === 0 ? true : undefined;
  }, 90_000);
});
