import { parseArgs } from 'node:util';
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

const KEYS_USAGE = 'usage: npm run keys -- create --email <email> [--tenant <name>] [--name <key name>] [--test]';

export function parseKeyCommand(args: string[]): CreateKeyCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args, allowPositionals: true,
      options: { email: { type: 'string' }, tenant: { type: 'string' }, name: { type: 'string', default: 'admin' }, test: { type: 'boolean', default: false } },
    });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error}\n${KEYS_USAGE}`);
  }
  const { positionals: [action], values } = parsed;
  if (action !== 'create' || parsed.positionals.length !== 1 || !values.email) throw new Error(KEYS_USAGE);
  return { email: values.email, tenantName: values.tenant, name: values.name, environment: values.test ? 'test' : 'live' };
}
