import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { registerAccount } from '../helpers/accounts.ts';
import { startGateway, useGateway, type HttpAnswer } from '../helpers/gateway.ts';

const JWT_SECRET = 'test-secret-of-at-least-thirty-two-characters!';
const ACCEPTED = {
  status: 'accepted',
  message: 'If this email address can be registered, the account now exists: sign in with POST /api/v1/auth/login',
};

/** The server does not trust proxy headers, so another client address is another loopback source address. */
function postFrom(sourceAddress: string, url: string, body: unknown): Promise<HttpAnswer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST', localAddress: sourceAddress, agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { text += chunk; });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: new Headers(response.headers as Record<string, string>), body: JSON.parse(text), text }));
    });
    request.on('error', reject);
    request.end(payload);
  });
}

const newEmail = (label: string) => `${label}-${randomBytes(4).toString('hex')}@example.test`;
const strongPassword = () => `pw-${randomBytes(8).toString('hex')}`;

describe('accounts hardening (S12)', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET, LOGIN_ATTEMPTS_PER_IP: '1000' } });

  it('register answers the same 202 for a new and an existing email, and changes nothing for an existing one', async () => {
    const email = newEmail('enum');
    const password = strongPassword();
    const created = await gateway().request('POST', '/api/v1/auth/register', { email, password, name: 'Enum' });
    assert.deepEqual([created.status, created.body], [202, ACCEPTED], created.text);
    const { rows: [user] } = await gateway().sql.query('select id, tenant_id, password_hash from users where email = $1', [email]);
    assert.ok(user, 'the new account exists');
    const membership = await gateway().sql.query('select role from memberships where user_id = $1 and tenant_id = $2', [user.id, user.tenant_id]);
    assert.equal(membership.rows[0]?.role, 'owner');
    const tenantsBefore = (await gateway().sql.query('select count(*)::int as count from tenants')).rows[0].count;

    for (const again of [email, email.toUpperCase()]) {
      const repeated = await gateway().request('POST', '/api/v1/auth/register', { email: again, password: strongPassword(), name: 'Attacker' });
      assert.deepEqual([repeated.status, repeated.body], [202, ACCEPTED], repeated.text);
    }
    const after = await gateway().sql.query('select id, tenant_id, password_hash, name from users where email = $1', [email]);
    assert.deepEqual(after.rows, [{ ...user, name: 'Enum' }], 'the existing account is untouched');
    assert.equal((await gateway().sql.query('select count(*)::int as count from tenants')).rows[0].count, tenantsBefore);

    const login = await gateway().request('POST', '/api/v1/auth/login', { email, password });
    assert.equal(login.status, 200, login.text);
    assert.deepEqual([login.body.user.id, login.body.user.tenant_id], [user.id, user.tenant_id]);
  });

  it('failed logins lock the source that made them, not the account', async () => {
    const account = await registerAccount(gateway(), 'locked-out');
    const attacker = '127.0.0.2';
    const attempts = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      attempts.push((await postFrom(attacker, `${gateway().url}/api/v1/auth/login`, { email: account.email, password: `guess-${attempt}-${strongPassword()}` })).status);
    }
    assert.deepEqual(attempts, [401, 401, 401, 401, 401, 429]);
    const attackerWithRightPassword = await postFrom(attacker, `${gateway().url}/api/v1/auth/login`, { email: account.email, password: account.password });
    assert.equal(attackerWithRightPassword.status, 429, 'the attacking source stays locked');
    assert.ok(Number(attackerWithRightPassword.headers.get('retry-after')) > 0);

    const owner = await gateway().request('POST', '/api/v1/auth/login', { email: account.email, password: account.password });
    assert.equal(owner.status, 200, owner.text);
    const elsewhere = await postFrom('127.0.0.3', `${gateway().url}/api/v1/auth/login`, { email: account.email, password: account.password });
    assert.equal(elsewhere.status, 200, elsewhere.text);
  });

  it('refuses weak passwords at registration with the reason, and creates nothing', async () => {
    for (const password of ['        ', 'password', '12345678', 'qwertyuiop', 'Passw0rd!']) {
      const email = newEmail('weak');
      const answer = await gateway().request('POST', '/api/v1/auth/register', { email, password });
      assert.equal(answer.status, 400, `${JSON.stringify(password)}: ${answer.text}`);
      assert.match(answer.body.error, /^invalid password: too easy to guess\. \S/, answer.text);
      assert.equal((await gateway().sql.query('select 1 from users where email = $1', [email])).rowCount, 0);
    }
    const common = await gateway().request('POST', '/api/v1/auth/register', { email: newEmail('weak'), password: 'password' });
    assert.match(common.body.error, /commonly used password|heavily used password/);
    const short = await gateway().request('POST', '/api/v1/auth/register', { email: newEmail('short'), password: 'x7#Qp!' });
    assert.equal(short.status, 400);
    const strong = await gateway().request('POST', '/api/v1/auth/register', { email: newEmail('strong'), password: 'correct-horse-battery-staple' });
    assert.equal(strong.status, 202, strong.text);
  });

  it('refuses an access token without exp, iat or sub, or with a non-UUID subject or tenant, as any bad token', async () => {
    const account = await registerAccount(gateway(), 'claims');
    const sign = (options: { sub?: string; tid?: string; exp?: boolean; iat?: boolean }) => {
      let jwt = new SignJWT({ tid: options.tid ?? account.tenantId, role: 'owner', typ: 'access' }).setProtectedHeader({ alg: 'HS256' })
        .setIssuer('agentgate').setAudience('agentgate-api');
      if (options.sub !== '') jwt = jwt.setSubject(options.sub ?? account.userId);
      if (options.exp !== false) jwt = jwt.setExpirationTime('5m');
      if (options.iat !== false) jwt = jwt.setIssuedAt();
      return jwt.sign(new TextEncoder().encode(JWT_SECRET));
    };
    const me = async (token: string) => gateway().request('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${token}` });
    assert.equal((await me(await sign({}))).status, 200, 'the test signs tokens the way the server does');
    const tokens = {
      'no exp': await sign({ exp: false }),
      'no iat': await sign({ iat: false }),
      'no sub': await sign({ sub: '' }),
      'non-UUID sub': await sign({ sub: 'not-a-uuid' }),
      'SQL in sub': await sign({ sub: "' OR 1=1 --" }),
      'non-UUID tenant': await sign({ tid: 'tenant-1' }),
    };
    const answers: Record<string, string> = {};
    for (const [label, token] of Object.entries(tokens)) {
      const answer = await me(token);
      answers[label] = `${answer.status} ${answer.body.error}`;
    }
    assert.deepEqual(answers, Object.fromEntries(Object.keys(tokens).map((label) => [label, '401 Invalid or expired token'])));
  });

  it('development still answers any origin', async () => {
    const answer = await gateway().requestRaw('OPTIONS', '/api/v1/tasks', '', { origin: 'https://anywhere.example', 'access-control-request-method': 'POST' });
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
  });
});

describe('CORS in production', () => {
  const production = { GATEWAY_ENV: 'production', JWT_SECRET };

  it('refuses to start with CORS_ALLOWED_ORIGINS=*', () => {
    const result = spawnSync(process.execPath, ['src/main.ts', 'serve'], {
      env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', ...production, CORS_ALLOWED_ORIGINS: 'https://app.example, *' },
      encoding: 'utf8', timeout: 20_000,
    });
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /CORS_ALLOWED_ORIGINS: .*production/);
  });

  it('allows no origin by default and only the configured ones otherwise', async (t) => {
    const preflight = (url: string, origin: string) => fetch(`${url}/api/v1/tasks`, {
      method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' },
    });
    const closed = await startGateway(t, { env: production });
    const refused = await preflight(closed.url, 'https://evil.example');
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    const simple = await fetch(`${closed.url}/health`, { headers: { origin: 'https://evil.example' } });
    assert.equal(simple.headers.get('access-control-allow-origin'), null);

    const listed = await startGateway(t, { env: { ...production, CORS_ALLOWED_ORIGINS: 'https://app.example' } });
    assert.equal((await preflight(listed.url, 'https://app.example')).headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal((await preflight(listed.url, 'https://evil.example')).headers.get('access-control-allow-origin'), null);
  });
});
