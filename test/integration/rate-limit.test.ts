import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { countHits } from '../../src/http/fixed-window.ts';
import { createTestDatabase, startGateway, type Gateway } from '../helpers/gateway.ts';

const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

async function ownerToken(gateway: Gateway, email: string): Promise<string> {
  const account = { email, password: 'long-enough-password' };
  assert.equal((await gateway.request('POST', '/api/v1/auth/register', account)).status, 202);
  const login = await gateway.request('POST', '/api/v1/auth/login', account);
  return login.body.access_token;
}

test('fixed windows count by the clock they are given: hits within a window add up, the next window starts at one', async (t) => {
  const { db, pool } = createDatabase(await createTestDatabase(t), { size: 2, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
  t.after(() => pool.end());
  await migrateToLatest(db);
  const minute = 1_700_000_040_000; // 60-second aligned
  const windows = [{ key: 'a', windowSeconds: 60 }, { key: 'b', windowSeconds: 1 }];
  assert.deepEqual(await countHits(db, windows, minute + 100), [{ count: 1, resetAt: 1_700_000_100 }, { count: 1, resetAt: 1_700_000_041 }]);
  assert.deepEqual(await countHits(db, windows, minute + 900), [{ count: 2, resetAt: 1_700_000_100 }, { count: 2, resetAt: 1_700_000_041 }]);
  assert.deepEqual(await countHits(db, windows, minute + 1_000), [{ count: 3, resetAt: 1_700_000_100 }, { count: 1, resetAt: 1_700_000_042 }]);
  assert.deepEqual(await countHits(db, windows, minute + 59_999), [{ count: 4, resetAt: 1_700_000_100 }, { count: 1, resetAt: 1_700_000_100 }]);
  assert.deepEqual(await countHits(db, [{ key: 'a', windowSeconds: 60, amount: 5 }], minute + 60_000), [{ count: 5, resetAt: 1_700_000_160 }]);
});

test('with two processes on one database, the request past a key\'s minute limit is refused by either', async (t) => {
  const processA = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'rate-a' } });
  const processB = await startGateway(t, { databaseUrl: processA.databaseUrl, env: { ...env, EXECUTOR_ID: 'rate-b' }, args: ['--role', 'gateway'] });
  const token = await ownerToken(processA, 'limits@example.test');
  const limit = 12;
  // A run that straddles two minute windows proves nothing; the X-RateLimit-Reset headers tell, and a fresh key tries again.
  for (let attempt = 1; ; attempt++) {
    const created = await processA.request('POST', '/api/v1/auth/api-keys', { name: `limited ${attempt}`, rate_limit_per_minute: limit }, { authorization: `Bearer ${token}` });
    assert.equal(created.status, 201, created.text);
    const headers = { 'x-api-key': created.body.key };
    const answers = [];
    // Four a second: within the burst allowance of a 12/min key (a third of a minute's requests per second).
    for (let index = 0; index < limit; index += 1) {
      if (index > 0 && index % 4 === 0) await sleep(1_050);
      answers.push(await (index % 2 === 0 ? processA : processB).request('GET', '/api/v1/tasks?limit=1', undefined, headers));
    }
    const refused = [await processB.request('GET', '/api/v1/tasks?limit=1', undefined, headers), await processA.request('GET', '/api/v1/tasks?limit=1', undefined, headers)];
    const resets = new Set([...answers, ...refused].map((answer) => answer.headers.get('x-ratelimit-reset')));
    if (resets.size > 1 && attempt < 3) continue;
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [200]);
    assert.equal(answers[0].headers.get('x-ratelimit-limit'), String(limit));
    assert.equal(answers[0].headers.get('x-ratelimit-remaining'), String(limit - 1));
    assert.equal(answers[limit - 1].headers.get('x-ratelimit-remaining'), '0');
    assert.ok(Number(answers[0].headers.get('x-ratelimit-reset')) > Date.now() / 1000);
    for (const answer of refused) {
      assert.equal(answer.status, 429);
      assert.equal(answer.body.error, 'Rate limit exceeded');
      assert.ok(Number(answer.headers.get('retry-after')) >= 1);
      assert.equal(answer.headers.get('x-ratelimit-remaining'), '0');
    }
    return;
  }
});

test('a burst is held to a third of the minute\'s allowance per second (20/s at 60/min)', async (t) => {
  const gateway = await startGateway(t, { env });
  const token = await ownerToken(gateway, 'burst@example.test');
  const created = await gateway.request('POST', '/api/v1/auth/api-keys', { name: 'bursty' }, { authorization: `Bearer ${token}` });
  const headers = { 'x-api-key': created.body.key };
  // Warmed up on another credential (the pool's connections opened, the path compiled), and started as a second
  // begins, the burst lands in as few one-second windows as the machine allows.
  await Promise.all(Array.from({ length: 20 }, () => gateway.request('GET', '/api/v1/tasks?limit=1', undefined, { authorization: `Bearer ${token}` })));
  const burstWindows = async () => new Map((await gateway.sql.query<{ key: string; window_start: string; count: number }>(
    `select key, window_start, count from rate_limit_windows where key like 'burst:%'`)).rows.map((row) => [`${row.key}@${row.window_start}`, row.count]));
  const before = await burstWindows();
  await sleep(1_000 - (Date.now() % 1_000));
  // 59: all within the minute's 60, and spread over even two seconds one of them holds more than 20.
  const answers = await Promise.all(Array.from({ length: 59 }, () => gateway.request('GET', '/api/v1/tasks?limit=1', undefined, headers)));
  const accepted = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status === 429);
  assert.equal(accepted.length + refused.length, 59);
  // However many seconds the burst straddled on a busy machine, each passed at most 20 of its requests.
  const seconds = [...(await burstWindows())].filter(([window]) => !before.has(window)).map(([, count]) => count);
  assert.equal(seconds.reduce((sum, count) => sum + count, 0), 59, `the burst's one-second windows: ${seconds.join(', ')}`);
  assert.equal(accepted.length, seconds.reduce((sum, count) => sum + Math.min(count, 20), 0), `accepted per second at most 20: ${seconds.join(', ')}`);
  assert.ok(refused.length >= 1, `${accepted.length} accepted, ${refused.length} refused, in one-second windows of ${seconds.join(', ')}`);
  for (const answer of refused) {
    assert.equal(answer.body.error, 'Rate limit exceeded: at most 20 requests per second');
    assert.equal(answer.headers.get('retry-after'), '1');
  }
});
