import { randomBytes, randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { conflict, isAppError } from '../errors.ts';
import { recordAudit } from './audit.ts';
import type { Caller } from './caller.ts';
import { checkLoginAllowed, recordLoginFailure } from './login-throttle.ts';
import { checkPasswordStrength, DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from './passwords.ts';
import { authenticationError } from './resolve-credential.ts';
import type { LoginBody, RegisterBody } from './schemas.ts';
import { issueTokenPair } from './session-tokens.ts';

export interface NewAccount { email: string; passwordHash: string | null; name: string | null; tenantName: string }

/** Creates a tenant and its owner in one transaction (registration and the CLI's first admin). */
export async function createTenantWithOwner(db: Db, account: NewAccount) {
  return db.transaction().execute(async (transaction) => {
    const existing = await transaction.selectFrom('users').select('id').where('email', '=', account.email).executeTakeFirst();
    if (existing) throw emailTaken();
    const tenant = { id: randomUUID(), name: account.tenantName, slug: slugFor(account.tenantName) };
    const user = { id: randomUUID(), email: account.email, name: account.name, tenantId: tenant.id, role: 'owner' as const };
    await transaction.insertInto('tenants').values(tenant).execute();
    await transaction.insertInto('users').values({
      id: user.id, tenant_id: tenant.id, email: user.email, name: user.name, role: 'owner', password_hash: account.passwordHash,
    }).execute().catch((error: unknown) => {
      // Two registrations of one new email at once: the loser meets the unique index, not the check above.
      throw (error as { constraint?: string }).constraint === 'users_email_key' ? emailTaken() : error;
    });
    await transaction.insertInto('memberships').values({ user_id: user.id, tenant_id: tenant.id, role: 'owner' }).execute();
    return { tenant, user };
  });
}

const REGISTER_ACCEPTED = {
  status: 'accepted',
  message: 'If this email address can be registered, the account now exists: sign in with POST /api/v1/auth/login',
} as const;

/**
 * The answer is the same whether the email was new or taken, and both paths hash the password, so neither
 * the body nor the timing tells which accounts exist. A taken email changes nothing.
 */
export async function register(db: Db, input: Static<typeof RegisterBody>, ip: string) {
  const email = normaliseEmail(input.email);
  await checkPasswordStrength(input.password, [email, input.name ?? '']);
  const passwordHash = await hashPassword(input.password);
  try {
    const { tenant, user } = await createTenantWithOwner(db, {
      email, passwordHash, name: input.name ?? null, tenantName: input.tenant_name ?? `${email.split('@')[0]}'s workspace`,
    });
    await recordAudit(db, { type: 'register', userId: user.id, tenantId: tenant.id, ip });
  } catch (error) {
    if (!isAppError(error) || error.statusCode !== 409) throw error;
    await recordAudit(db, { type: 'register', userId: null, ip, details: { outcome: 'email_taken' } });
  }
  return REGISTER_ACCEPTED;
}

/** Same answer and similar timing whether the account is unknown or the password wrong. */
export async function login(db: Db, config: Readonly<Config>, input: Static<typeof LoginBody>, ip: string) {
  const email = normaliseEmail(input.email);
  await checkLoginAllowed(db, { perIp: config.auth.loginAttemptsPerIp, perAccount: config.auth.loginAttemptsPerAccount }, ip, email);
  const user = await db.selectFrom('users').select(['id', 'email', 'name', 'tenant_id', 'password_hash', 'is_active'])
    .where('email', '=', email).executeTakeFirst();
  const valid = await verifyPassword(input.password, user?.password_hash ?? DUMMY_PASSWORD_HASH);
  if (!user || !valid || !user.is_active || !user.password_hash) {
    await recordLoginFailure(db, email, ip);
    await recordAudit(db, { type: 'login_failed', userId: user?.id ?? null, ip, details: { reason: user ? 'bad_password' : 'unknown_account' } });
    throw authenticationError('Invalid email or password');
  }
  const membership = await db.selectFrom('memberships').select('role').where('user_id', '=', user.id).where('tenant_id', '=', user.tenant_id).executeTakeFirstOrThrow();
  await recordAudit(db, { type: 'login', userId: user.id, tenantId: user.tenant_id, ip });
  return issueTokenPair(db, config, { id: user.id, email: user.email, name: user.name, tenantId: user.tenant_id, role: membership.role });
}

export async function describeCaller(db: Db, caller: Caller) {
  const user = await db.selectFrom('users').select(['email', 'name']).where('id', '=', caller.userId).executeTakeFirst();
  const tenants = await db.selectFrom('memberships').innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .select(['tenants.id', 'tenants.name', 'memberships.role']).where('memberships.user_id', '=', caller.userId).orderBy('tenants.name').execute();
  return {
    user_id: caller.userId,
    email: user?.email ?? '',
    name: user?.name ?? null,
    tenant_id: caller.tenantId,
    role: caller.role,
    scopes: [...caller.scopes],
    auth_method: caller.authMethod,
    api_key_id: caller.apiKeyId ?? null,
    tenants,
  };
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

const emailTaken = () => conflict('An account with this email already exists');

function slugFor(name: string): string {
  const base = name.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'tenant';
  return `${base}-${randomBytes(3).toString('hex')}`;
}
