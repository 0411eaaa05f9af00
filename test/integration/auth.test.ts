import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { addMember, registerAccount, withKey } from '../helpers/accounts.ts';
import { useGateway, waitFor } from '../helpers/gateway.ts';
import { readSse } from '../helpers/sse-client.ts';

const JWT_SECRET = 'test-secret-of-at-least-thirty-two-characters!';

describe('authentication', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET, LOGIN_ATTEMPTS_PER_ACCOUNT: '3', LOG_LEVEL: 'info' } });

  it('answers 401 with the spec messages and a WWW-Authenticate challenge', async () => {
    const none = await gateway().request('GET', '/api/v1/tasks');
    assert.deepEqual([none.status, none.body.error], [401, 'Authentication required']);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer realm="agentgate"/);
    const badKey = await gateway().request('GET', '/api/v1/tasks', undefined, { 'x-api-key': 'sk_live_thisisnotarealkey0000000000' });
    assert.deepEqual([badKey.status, badKey.body.error], [401, 'Invalid API key']);
    const badToken = await gateway().request('GET', '/api/v1/tasks', undefined, { authorization: 'Bearer not.a.jwt' });
    assert.deepEqual([badToken.status, badToken.body.error], [401, 'Invalid or expired token']);
    const basic = await gateway().request('GET', '/api/v1/tasks', undefined, { authorization: 'Basic dXNlcjpwYXNz' });
    assert.deepEqual([basic.status, basic.body.error], [401, 'Unauthorized']);
    assert.equal((await gateway().request('GET', '/health')).status, 200, 'probes need no credential');
  });

  it('register, login, me, and keys: created with a prefix and shown once, listed without secrets, usable both ways', async () => {
    const account = await registerAccount(gateway(), 'alice');
    const login = await gateway().request('POST', '/api/v1/auth/login', { email: account.email.toUpperCase(), password: account.password });
    assert.equal(login.status, 200);
    assert.equal(login.body.token_type, 'Bearer');
    const me = await gateway().request('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${login.body.access_token}` });
    assert.deepEqual([me.body.user_id, me.body.tenant_id, me.body.role, me.body.auth_method], [account.userId, account.tenantId, 'owner', 'jwt']);
    assert.match(account.apiKey, /^sk_live_/);
    const list = await gateway().request('GET', '/api/v1/auth/api-keys', undefined, withKey(account));
    assert.equal(list.status, 200);
    assert.ok(!list.text.includes(account.apiKey), 'no secret in the list');
    assert.equal(list.body.api_keys[0].prefix, account.apiKey.slice(0, 16));
    // Stamped without being awaited (at most once a minute per key and process): the next listing shows it.
    const stamped = await waitFor('the key\'s last use stamped', async () =>
      (await gateway().request('GET', '/api/v1/auth/api-keys', undefined, withKey(account))).body.api_keys[0].last_used_at ?? undefined);
    assert.ok(Math.abs(Date.parse(stamped) - Date.now()) < 60_000, stamped);
    const { rows } = await gateway().sql.query('select key_hash from api_keys where user_id = $1', [account.userId]);
    assert.ok(rows.every((row) => !row.key_hash.includes(account.apiKey)), 'only the hash is stored');
    const viaBearer = await gateway().request('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${account.apiKey}` });
    assert.equal(viaBearer.body.auth_method, 'api_key');
    const test = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'ci', environment: 'test' }, withKey(account));
    assert.match(test.body.key, /^sk_test_/);
    const duplicate = await gateway().request('POST', '/api/v1/auth/register', { email: account.email, password: 'another-password' });
    assert.equal(duplicate.status, 202, 'the answer does not reveal that the email is taken');
    assert.equal((await gateway().request('POST', '/api/v1/auth/login', { email: account.email, password: 'another-password' })).status, 401);
    const wrong = await gateway().request('POST', '/api/v1/auth/login', { email: account.email, password: 'wrong-password' });
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'Invalid email or password']);
  });

  it('rotating a key invalidates the old one; revoking stops the key', async () => {
    const account = await registerAccount(gateway(), 'rotor');
    const rotated = await gateway().request('POST', '/api/v1/auth/api-keys/refresh', undefined, withKey(account));
    assert.equal(rotated.status, 201, rotated.text);
    assert.notEqual(rotated.body.key, account.apiKey);
    assert.equal((await gateway().request('GET', '/api/v1/auth/me', undefined, withKey(account))).status, 401);
    const fresh = { 'x-api-key': rotated.body.key };
    assert.equal((await gateway().request('GET', '/api/v1/auth/me', undefined, fresh)).status, 200);
    const revoked = await gateway().request('DELETE', `/api/v1/auth/api-keys/${rotated.body.id}`, undefined, { authorization: `Bearer ${account.accessToken}` });
    assert.deepEqual([revoked.status, revoked.body.success], [200, true]);
    const after = await gateway().request('GET', '/api/v1/auth/me', undefined, fresh);
    assert.deepEqual([after.status, after.body.error], [401, 'Invalid API key']);
  });

  it('refresh tokens rotate, and reusing a rotated one revokes the whole family', async () => {
    const account = await registerAccount(gateway(), 'refresher');
    const first = await gateway().request('POST', '/api/v1/auth/refresh', { refresh_token: account.refreshToken });
    assert.equal(first.status, 200);
    assert.notEqual(first.body.refresh_token, account.refreshToken);
    const reuse = await gateway().request('POST', '/api/v1/auth/refresh', { refresh_token: account.refreshToken });
    assert.deepEqual([reuse.status, reuse.body.error], [401, 'Invalid or expired token']);
    const descendant = await gateway().request('POST', '/api/v1/auth/refresh', { refresh_token: first.body.refresh_token });
    assert.equal(descendant.status, 401, 'the stolen family is revoked');
    const { rows } = await gateway().sql.query(`select event_type from audit_logs where user_id = $1`, [account.userId]);
    assert.ok(rows.some((row) => row.event_type === 'refresh_reuse_detected'));
  });

  it('rejects expired, forged, unsigned and wrong-algorithm tokens', async () => {
    const account = await registerAccount(gateway(), 'jwt');
    const claims = { tid: account.tenantId, role: 'owner', typ: 'access' };
    const sign = (secret: string, alg = 'HS256', expires: string | number = '5m') => new SignJWT(claims).setProtectedHeader({ alg })
      .setSubject(account.userId).setIssuer('agentgate').setAudience('agentgate-api').setIssuedAt().setExpirationTime(expires)
      .sign(new TextEncoder().encode(secret));
    const valid = await sign(JWT_SECRET);
    assert.equal((await gateway().request('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${valid}` })).status, 200);
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${valid.split('.')[1]}.`;
    for (const token of [await sign(JWT_SECRET, 'HS256', Math.floor(Date.now() / 1000) - 60), await sign('some-other-secret-of-thirty-two-characters'),
      await sign(JWT_SECRET, 'HS512'), unsigned]) {
      const answer = await gateway().request('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${token}` });
      assert.deepEqual([answer.status, answer.body.error], [401, 'Invalid or expired token']);
    }
  });

  it('X-Tenant-ID selects only a tenant of the caller; an expired key is refused', async () => {
    const alice = await registerAccount(gateway(), 'tenant-a');
    const bob = await registerAccount(gateway(), 'tenant-b');
    const foreign = await gateway().request('GET', '/api/v1/tasks', undefined, { authorization: `Bearer ${alice.accessToken}`, 'x-tenant-id': bob.tenantId });
    assert.equal(foreign.status, 403);
    const own = await gateway().request('GET', '/api/v1/tasks', undefined, { authorization: `Bearer ${alice.accessToken}`, 'x-tenant-id': alice.tenantId });
    assert.equal(own.status, 200);
    const garbage = await gateway().request('GET', '/api/v1/tasks', undefined, { ...withKey(alice), 'x-tenant-id': '../../etc' });
    assert.equal(garbage.status, 403);
    await gateway().sql.query(`update api_keys set expires_at = now() - interval '1 minute' where user_id = $1`, [alice.userId]);
    assert.equal((await gateway().request('GET', '/api/v1/tasks', undefined, withKey(alice))).status, 401);
  });

  it('scopes limit what a key may do; admins create keys for members, members only for themselves', async () => {
    const owner = await registerAccount(gateway(), 'scoped');
    const readOnly = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'reader', scopes: ['tasks:read'] }, withKey(owner));
    const reader = { 'x-api-key': readOnly.body.key };
    assert.equal((await gateway().request('GET', '/api/v1/tasks', undefined, reader)).status, 200);
    const write = await gateway().request('POST', '/api/v1/tasks', { query: 'not allowed' }, reader);
    assert.deepEqual([write.status, write.body.error], [403, 'Forbidden: missing scope tasks:write']);
    const member = await addMember(gateway(), owner, 'scoped-member');
    const forOwner = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'x', user_id: owner.userId }, withKey(member));
    assert.equal(forOwner.status, 403);
    const escalate = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'x', scopes: ['skills:dangerous'] }, withKey(member));
    assert.equal(escalate.status, 403);
  });

  it('accepts the api_key query parameter on SSE only', async () => {
    const account = await registerAccount(gateway(), 'sse');
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'stream with a query key' }, withKey(account));
    const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${task.body.task_id}&api_key=${account.apiKey}`);
    assert.equal(stream.status, 200);
    assert.equal(stream.messages.at(-1)?.event, 'done');
    const elsewhere = await gateway().request('GET', `/api/v1/tasks/${task.body.task_id}?api_key=${account.apiKey}`);
    assert.equal(elsewhere.status, 401);
    assert.ok(!gateway().output().includes(account.apiKey), 'no key in the logs');
  });

  it('the CLI creates the first admin key of a fresh install', async () => {
    const result = spawnSync(process.execPath, ['src/main.ts', 'keys', 'create', '--email', 'First.Admin@example.test', '--tenant', 'Acme'], {
      env: { PATH: process.env.PATH, DATABASE_URL: gateway().databaseUrl, LOG_LEVEL: 'warn', JWT_SECRET }, encoding: 'utf8', timeout: 30_000,
    });
    assert.equal(result.status, 0, result.stderr);
    const key = /sk_live_[A-Za-z0-9_-]+/.exec(result.stdout)?.[0];
    assert.ok(key, result.stdout);
    const me = await gateway().request('GET', '/api/v1/auth/me', undefined, { 'x-api-key': key });
    assert.deepEqual([me.status, me.body.email, me.body.role, me.body.scopes], [200, 'first.admin@example.test', 'owner', ['*']]);
  });

  it('throttles repeated failed logins of an account from one source', async () => {
    const account = await registerAccount(gateway(), 'throttled');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      assert.equal((await gateway().request('POST', '/api/v1/auth/login', { email: account.email, password: 'nope-nope' })).status, 401);
    }
    const locked = await gateway().request('POST', '/api/v1/auth/login', { email: account.email, password: account.password });
    assert.equal(locked.status, 429);
    assert.ok(Number(locked.headers.get('retry-after')) > 0);
    const { rows } = await gateway().sql.query(`select event_type from audit_logs where user_id = $1 order by id`, [account.userId]);
    assert.ok(rows.filter((row) => row.event_type === 'login_failed').length >= 3);
  });
});

describe('start-up safety', () => {
  const start = (env: Record<string, string>) => spawnSync(process.execPath, ['src/main.ts', 'serve'], {
    env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', ...env }, encoding: 'utf8', timeout: 20_000,
  });

  it('refuses skip-auth outside development and a default JWT secret in production', () => {
    const skip = start({ GATEWAY_ENV: 'production', GATEWAY_SKIP_AUTH: '1', JWT_SECRET });
    assert.notEqual(skip.status, 0);
    assert.match(skip.stderr, /GATEWAY_SKIP_AUTH/);
    const secret = start({ GATEWAY_ENV: 'production' });
    assert.notEqual(secret.status, 0);
    assert.match(secret.stderr, /JWT_SECRET/);
  });
});
