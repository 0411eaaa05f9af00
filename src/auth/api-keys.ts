import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Static } from 'typebox';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { ApiKeysTable } from '../db/schema.ts';
import type { Selectable } from 'kysely';
import { AppError, badRequest, forbidden, notFound } from '../errors.ts';
import { tenantRateLimit } from '../http/rate-limit.ts';
import { pauseSchedulesOfKey } from '../task-state/schedule-pause.ts';
import { generateApiKey, type KeyEnvironment } from './api-key-secret.ts';
import { recordAudit } from './audit.ts';
import { DEFAULT_KEY_SCOPES, hasScope, isAdmin, outranks, scopesWithinRole, type Caller, type Role } from './caller.ts';
import type { CreateKeyBody } from './schemas.ts';

type KeyRow = Selectable<ApiKeysTable>;

export interface NewKey {
  userId: string;
  tenantId: string;
  name: string;
  scopes: string[];
  environment: KeyEnvironment;
  expiresAt: Date | null;
  rateLimitPerMinute: number | null;
}

/** Stores a new key (hash only) and returns its view with the secret, which is never shown again. */
export async function insertApiKey(db: Db, key: NewKey) {
  const secret = generateApiKey(key.environment);
  const row = await db.insertInto('api_keys').values({
    id: randomUUID(), user_id: key.userId, tenant_id: key.tenantId, name: key.name, prefix: secret.prefix,
    key_hash: secret.hash, scopes: key.scopes, expires_at: key.expiresAt, rate_limit_per_minute: key.rateLimitPerMinute,
  }).returningAll().executeTakeFirstOrThrow();
  return { ...toKeyView(row), key: secret.key };
}

/**
 * A caller creates keys for themselves; owners and admins also for members of their tenant who do not
 * outrank them. A key never gets scopes its creator lacks or its user's role does not allow, and only
 * owners and admins set a key's rate limit, within the tenant's plan.
 */
export async function createApiKey(db: Db, config: Readonly<Config>, caller: Caller, input: Static<typeof CreateKeyBody>, ip: string) {
  const userId = input.user_id?.toLowerCase() ?? caller.userId;
  const role = userId === caller.userId ? caller.role : await otherUsersRole(db, caller, userId);
  const scopes = input.scopes ?? DEFAULT_KEY_SCOPES;
  const notHeld = scopes.filter((scope) => !hasScope(caller, scope));
  if (notHeld.length > 0) throw forbidden(`Forbidden: cannot grant scopes you do not have: ${notHeld.join(', ')}`);
  const beyondRole = scopes.filter((scope) => !scopesWithinRole([scope], role).includes(scope));
  if (beyondRole.length > 0) throw forbidden(`Forbidden: the ${role} role does not allow scopes: ${beyondRole.join(', ')}`);
  if (input.rate_limit_per_minute !== undefined) await checkKeyRateLimit(db, config, caller, input.rate_limit_per_minute);
  const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at);
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw badRequest('expires_at must be in the future');
  const created = await insertApiKey(db, {
    userId, tenantId: caller.tenantId, name: input.name, scopes, environment: input.environment ?? 'live',
    expiresAt, rateLimitPerMinute: input.rate_limit_per_minute ?? null,
  });
  await recordAudit(db, { type: 'api_key_created', userId: caller.userId, tenantId: caller.tenantId, ip, details: { key_id: created.id, for_user: userId } });
  return created;
}

async function otherUsersRole(db: Db, caller: Caller, userId: string): Promise<Role> {
  if (!isAdmin(caller)) throw forbidden('Forbidden: only owners and admins create keys for other users');
  const member = await db.selectFrom('memberships').select('role').where('user_id', '=', userId).where('tenant_id', '=', caller.tenantId).executeTakeFirst();
  if (!member) throw notFound('User not found in this tenant');
  if (outranks(member.role, caller.role)) throw forbidden(`Forbidden: cannot create a key for a user whose role (${member.role}) is above yours`);
  return member.role;
}

async function checkKeyRateLimit(db: Db, config: Readonly<Config>, caller: Caller, perMinute: number): Promise<void> {
  if (!isAdmin(caller)) throw forbidden('Forbidden: only owners and admins set rate_limit_per_minute');
  const tenant = await db.selectFrom('tenants').select(['rate_limit_per_minute', 'plan']).where('id', '=', caller.tenantId).executeTakeFirstOrThrow();
  const ceiling = tenantRateLimit(config, tenant);
  if (perMinute > ceiling) throw badRequest(`rate_limit_per_minute must not exceed ${ceiling}, the limit of this tenant's plan`);
}

/** Owners and admins see every key of the tenant; members their own. Secrets are never listed. */
export async function listApiKeys(db: Db, caller: Caller) {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', caller.tenantId);
  if (!isAdmin(caller)) query = query.where('user_id', '=', caller.userId);
  const rows = await query.orderBy('created_at', 'desc').execute();
  return { api_keys: rows.map(toKeyView), count: rows.length };
}

/** Replaces a key with a new secret (same name, scopes, owner); the old key stops working at once. */
export async function rotateApiKey(db: Db, caller: Caller, keyId: string | undefined, ip: string) {
  const id = keyId ?? caller.apiKeyId;
  if (!id) throw badRequest('id is required unless the request is authenticated with the API key to rotate');
  const created = await db.transaction().execute(async (transaction) => {
    const old = await findManageableKey(transaction, caller, id, true);
    if (old.revoked_at) throw new AppError(409, 'API key is revoked');
    await transaction.updateTable('api_keys').set({ revoked_at: sql`now()` as never }).where('id', '=', old.id).execute();
    const rotated = await insertApiKey(transaction, {
      userId: old.user_id, tenantId: old.tenant_id, name: old.name, scopes: old.scopes,
      environment: old.prefix.startsWith('sk_test_') ? 'test' : 'live', expiresAt: old.expires_at, rateLimitPerMinute: old.rate_limit_per_minute,
    });
    // A rotation replaces the secret, not the grant: the schedules that ran as the old key run as the new one.
    await transaction.updateTable('schedules').set({ api_key_id: rotated.id }).where('api_key_id', '=', old.id).execute();
    return rotated;
  });
  await recordAudit(db, { type: 'api_key_rotated', userId: caller.userId, tenantId: caller.tenantId, ip, details: { old_key_id: id, key_id: created.id } });
  return created;
}

/** Revokes a key; the schedules that run as it pause in the same commit, saying why (resuming binds them to a live credential). */
export async function revokeApiKey(db: Db, caller: Caller, keyId: string, ip: string) {
  const key = await db.transaction().execute(async (transaction) => {
    const found = await findManageableKey(transaction, caller, keyId, true);
    await transaction.updateTable('api_keys').set({ revoked_at: sql`coalesce(revoked_at, now())` as never }).where('id', '=', found.id).execute();
    await pauseSchedulesOfKey(transaction, found.id, keyPauseReason(keyStopReason(found.prefix, 'was revoked')));
    return found;
  });
  await recordAudit(db, { type: 'api_key_revoked', userId: caller.userId, tenantId: caller.tenantId, ip, details: { key_id: key.id } });
  return { success: true, message: 'API key revoked', id: key.id };
}

/** Why a schedule that runs as a key (schedules/run-as.ts) stops: the refusal of its run, and its pause reason. */
export const keyStopReason = (prefix: string, what: 'was revoked' | 'expired') => `the API key it runs as (${prefix}…) ${what}`;
export const keyPauseReason = (stopReason: string) => `Auto-paused: ${stopReason}; resume it with a live credential`;

/** Members manage their own keys; owners and admins also those of users who do not outrank them. */
async function findManageableKey(db: Db, caller: Caller, keyId: string, forUpdate: boolean): Promise<KeyRow> {
  let query = db.selectFrom('api_keys').selectAll('api_keys')
    .leftJoin('memberships', (join) => join.onRef('memberships.user_id', '=', 'api_keys.user_id').onRef('memberships.tenant_id', '=', 'api_keys.tenant_id'))
    .select('memberships.role')
    .where('api_keys.id', '=', keyId).where('api_keys.tenant_id', '=', caller.tenantId);
  if (forUpdate) query = query.forUpdate('api_keys');
  const found = await query.executeTakeFirst();
  if (!found) throw notFound('API key not found');
  const { role, ...key } = found;
  if (key.user_id === caller.userId) return key;
  if (!isAdmin(caller)) throw forbidden('Forbidden: not your API key');
  if (role && outranks(role, caller.role)) throw forbidden(`Forbidden: the key belongs to a user whose role (${role}) is above yours`);
  return key;
}

function toKeyView(row: KeyRow) {
  return {
    id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes, user_id: row.user_id, tenant_id: row.tenant_id,
    rate_limit_per_minute: row.rate_limit_per_minute,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}
