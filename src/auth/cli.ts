import type { Db } from '../db/database.ts';
import { normaliseEmail, createTenantWithOwner } from './accounts.ts';
import { insertApiKey } from './api-keys.ts';

export interface CreateKeyCommand { email: string; tenantName?: string; name: string; environment: 'test' | 'live' }

/**
 * `npm run keys -- create --email admin@example.com`: the first admin key of a fresh install. Creates the
 * tenant and its owner when the email is new (without a password: sign-in is by key until one is set
 * through registration), then a key with every scope. Prints the secret once.
 */
export async function createAdminKey(db: Db, command: CreateKeyCommand) {
  const email = normaliseEmail(command.email);
  const existing = await db.selectFrom('users').innerJoin('memberships', (join) => join.onRef('memberships.user_id', '=', 'users.id').onRef('memberships.tenant_id', '=', 'users.tenant_id'))
    .select(['users.id', 'users.tenant_id', 'memberships.role']).where('users.email', '=', email).executeTakeFirst();
  const owner = existing
    ? { userId: existing.id, tenantId: existing.tenant_id }
    : await createTenantWithOwner(db, { email, passwordHash: null, name: null, tenantName: command.tenantName ?? 'Default' })
      .then(({ user, tenant }) => ({ userId: user.id, tenantId: tenant.id }));
  return insertApiKey(db, { ...owner, name: command.name, scopes: ['*'], environment: command.environment, expiresAt: null, rateLimitPerMinute: null });
}

export function parseKeyCommand(args: string[]): CreateKeyCommand {
  const [action, ...options] = args;
  const value = (flag: string) => {
    const index = options.indexOf(flag);
    return index === -1 ? undefined : options[index + 1];
  };
  const email = value('--email');
  if (action !== 'create' || !email) throw new Error('usage: npm run keys -- create --email <email> [--tenant <name>] [--name <key name>] [--test]');
  return { email, tenantName: value('--tenant'), name: value('--name') ?? 'admin', environment: options.includes('--test') ? 'test' : 'live' };
}
