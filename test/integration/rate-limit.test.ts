import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway } from '../helpers/gateway.ts';

const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

test('with two processes on one database, the 61st request of a key within a minute is refused', async (t) => {
  const processA = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'rate-a' } });
  const processB = await startGateway(t, { databaseUrl: processA.databaseUrl, env: { ...env, EXECUTOR_ID: 'rate-b' }, args: ['--role', 'gateway'] });
  const account = { email: 'limits@example.test', password: 'long-enough-password' };
  await processA.request('POST', '/api/v1/auth/register', account);
  const login = await processA.request('POST', '/api/v1/auth/login', account);
  const created = await processA.request('POST', '/api/v1/auth/api-keys', { name: 'limited' }, { authorization: `Bearer ${login.body.access_token}` });
  const headers = { 'x-api-key': created.body.key };
  // Keep all 61 requests inside one fixed window.
  const secondOfMinute = new Date().getUTCSeconds();
  if (secondOfMinute > 40) await sleep((61 - secondOfMinute) * 1000);

  const answers = [];
  for (let index = 0; index < 60; index += 1) {
    answers.push(await (index % 2 === 0 ? processA : processB).request('GET', '/api/v1/tasks?limit=1', undefined, headers));
  }
  assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [200]);
  assert.equal(answers[0].headers.get('x-ratelimit-limit'), '60');
  assert.equal(answers[0].headers.get('x-ratelimit-remaining'), '59');
  assert.equal(answers[59].headers.get('x-ratelimit-remaining'), '0');
  assert.ok(Number(answers[0].headers.get('x-ratelimit-reset')) > Date.now() / 1000);

  for (const gateway of [processB, processA]) {
    const refused = await gateway.request('GET', '/api/v1/tasks?limit=1', undefined, headers);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error, 'Rate limit exceeded');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  }
});
