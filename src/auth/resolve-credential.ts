import { sql } from 'kysely';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { verifyAccessToken } from './access-tokens.ts';
import { hashApiKey, hashesMatch, looksLikeApiKey } from './api-key-secret.ts';
import { scopesForRole, scopesWithinRole, type Caller, type Role } from './caller.ts';

export type Credential = { kind: 'api_key' | 'jwt'; value: string };

/** 401 with the spec's messages (5.10) and a WWW-Authenticate challenge. */
export function authenticationError(message: string, tokenError = false): AppError {
  const challenge = tokenError ? 'Bearer realm="agentgate", error="invalid_token"' : 'Bearer realm="agentgate"';
  return new AppError(401, message, { headers: { 'www-authenticate': challenge } });
}

/** Turns an API key or access token into a caller of one tenant; throws 401/403 otherwise. */
export async function resolveCaller(db: Db, config: Readonly<Config>, credential: Credential, requestedTenant: string | undefined): Promise<Caller> {
  const caller = credential.kind === 'api_key'
    ? await callerFromApiKey(db, credential.value)
    : await callerFromAccessToken(db, config, credential.value);
  if (requestedTenant === undefined || requestedTenant === caller.tenantId) return caller;
  if (caller.authMethod === 'api_key') throw new AppError(403, 'Forbidden: this API key belongs to another tenant');
  const membership = await db.selectFrom('memberships').select('role')
    .where('user_id', '=', caller.userId)
    .where('tenant_id', '=', requestedTenant)
    .executeTakeFirst();
  if (!membership) throw new AppError(403, 'Forbidden: not a member of this tenant');
  return { ...caller, tenantId: requestedTenant, role: membership.role, scopes: scopesForRole(membership.role) };
}

async function callerFromApiKey(db: Db, key: string): Promise<Caller> {
  if (!looksLikeApiKey(key)) throw authenticationError('Invalid API key');
  const hash = hashApiKey(key);
  const row = await db.selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .innerJoin('memberships', (join) => join.onRef('memberships.user_id', '=', 'api_keys.user_id').onRef('memberships.tenant_id', '=', 'api_keys.tenant_id'))
    .select(['api_keys.id', 'api_keys.key_hash', 'api_keys.user_id', 'api_keys.tenant_id', 'api_keys.scopes', 'memberships.role'])
    .where('api_keys.key_hash', '=', hash)
    .where('api_keys.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('api_keys.expires_at', 'is', null), eb('api_keys.expires_at', '>', sql<Date>`now()`)]))
    .where('users.is_active', '=', true)
    .executeTakeFirst();
  if (!row || !hashesMatch(row.key_hash, hash)) throw authenticationError('Invalid API key');
  stampLastUse(db, row.id);
  return { tenantId: row.tenant_id, userId: row.user_id, role: row.role as Role, scopes: scopesWithinRole(row.scopes, row.role as Role), authMethod: 'api_key', apiKeyId: row.id };
}

/** When this process last stamped each key's `last_used_at`, so that a key used many times a minute costs no statement each time. */
const lastStamped = new Map<string, number>();
const STAMP_INTERVAL_MS = 60_000;
let lastSweep = 0;

/** `last_used_at` to the minute, written at most once a minute per key by each process, never awaited. */
function stampLastUse(db: Db, keyId: string): void {
  const now = Date.now();
  if (now - (lastStamped.get(keyId) ?? 0) < STAMP_INTERVAL_MS) return;
  // Forget keys not stamped for a minute (at most one pass a minute), so that the map holds only the keys in use.
  if (lastStamped.size >= 10_000 && now - lastSweep >= STAMP_INTERVAL_MS) {
    lastSweep = now;
    for (const [id, at] of lastStamped) if (now - at >= STAMP_INTERVAL_MS) lastStamped.delete(id);
  }
  lastStamped.set(keyId, now);
  void db.updateTable('api_keys').set({ last_used_at: sql`now()` as never }).where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute().catch(() => {});
}

async function callerFromAccessToken(db: Db, config: Readonly<Config>, token: string): Promise<Caller> {
  const claims = await verifyAccessToken(config.auth.jwtSecret, token);
  const caller = claims && await memberCaller(db, claims.userId, claims.tenantId, 'jwt');
  if (!caller) throw authenticationError('Invalid or expired token', true);
  return caller;
}

/**
 * A user acting in a tenant with the role and scopes they have there now: signed in, or through a schedule
 * they own. Undefined when they are not an active member of it.
 */
export async function memberCaller(db: Db, userId: string, tenantId: string, authMethod: 'jwt' | 'schedule'): Promise<Caller | undefined> {
  const membership = await db.selectFrom('memberships').innerJoin('users', 'users.id', 'memberships.user_id')
    .select('memberships.role')
    .where('memberships.user_id', '=', userId).where('memberships.tenant_id', '=', tenantId)
    .where('users.is_active', '=', true)
    .executeTakeFirst();
  return membership && { tenantId, userId, role: membership.role, scopes: scopesForRole(membership.role), authMethod };
}
