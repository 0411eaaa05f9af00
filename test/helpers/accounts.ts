import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Gateway } from './gateway.ts';

export interface Account {
  email: string;
  password: string;
  userId: string;
  tenantId: string;
  accessToken: string;
  refreshToken: string;
  /** An API key with every scope, in a tenant with a high rate limit, for tests that are not about limits. */
  apiKey: string;
}

const DEFAULT_SCOPES = ['tasks:read', 'tasks:write', 'sessions:read', 'sessions:write', 'keys:manage'];

/** Registers a new account (its own tenant), signs in, and creates an API key for it. */
export async function registerAccount(gateway: Gateway, label = 'user'): Promise<Account> {
  const email = `${label}-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const registered = await gateway.request('POST', '/api/v1/auth/register', { email, password, name: label });
  assert.equal(registered.status, 202, registered.text);
  const login = await gateway.request('POST', '/api/v1/auth/login', { email, password });
  assert.equal(login.status, 200, login.text);
  // Raising a tenant's limit is an operator's act (no route does it), as an enterprise contract would.
  await gateway.sql.query('update tenants set rate_limit_per_minute = 100000 where id = $1', [login.body.user.tenant_id]);
  const key = await gateway.request('POST', '/api/v1/auth/api-keys', { name: `${label} key`, scopes: DEFAULT_SCOPES },
    { authorization: `Bearer ${login.body.access_token}` });
  assert.equal(key.status, 201, key.text);
  return {
    email, password, userId: login.body.user.id, tenantId: login.body.user.tenant_id,
    accessToken: login.body.access_token, refreshToken: login.body.refresh_token, apiKey: key.body.key,
  };
}

/**
 * Adds a member (or an admin) to `owner`'s tenant. There is no invitation route yet, so the membership row is
 * written directly; the member's key (the default scopes) is then created through the API by the owner.
 */
export async function addMember(gateway: Gateway, owner: Account, label = 'member', role: 'member' | 'admin' = 'member'): Promise<Account> {
  const member = await registerAccount(gateway, label);
  await gateway.sql.query(`insert into memberships (user_id, tenant_id, role) values ($1, $2, $3)`, [member.userId, owner.tenantId, role]);
  const key = await gateway.request('POST', '/api/v1/auth/api-keys', { name: 'member key', user_id: member.userId },
    { 'x-api-key': owner.apiKey });
  assert.equal(key.status, 201, key.text);
  return { ...member, tenantId: owner.tenantId, apiKey: key.body.key };
}

export const withKey = (account: Account) => ({ 'x-api-key': account.apiKey });

/**
 * The account with a key that also has `tools:dangerous`, which choosing a role with dangerous tools needs
 * (developer, data_analytics); an owner or admin creates it for themselves, signed in.
 */
export async function withDangerousToolsKey(gateway: Gateway, account: Account): Promise<Account> {
  const key = await gateway.request('POST', '/api/v1/auth/api-keys', { name: 'dangerous tools', scopes: [...DEFAULT_SCOPES, 'tools:dangerous'] },
    { authorization: `Bearer ${account.accessToken}`, 'x-tenant-id': account.tenantId });
  assert.equal(key.status, 201, key.text);
  return { ...account, apiKey: key.body.key };
}
