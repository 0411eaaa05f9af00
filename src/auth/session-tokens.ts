import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { generateRefreshToken, hashRefreshToken, issueAccessToken } from './access-tokens.ts';
import { recordAudit } from './audit.ts';
import type { Role } from './caller.ts';
import { authenticationError } from './resolve-credential.ts';

export interface SignedInUser { id: string; email: string; name: string | null; tenantId: string; role: Role }

/** An access token and a new refresh token of `familyId` (a new family at login). */
export async function issueTokenPair(db: Db, config: Readonly<Config>, user: SignedInUser, familyId: string = randomUUID()) {
  const refresh = generateRefreshToken();
  await db.insertInto('refresh_tokens').values({
    id: randomUUID(), family_id: familyId, user_id: user.id, tenant_id: user.tenantId, token_hash: refresh.hash,
    expires_at: sql`now() + make_interval(days => ${config.auth.refreshTokenTtlDays})` as never,
  }).execute();
  return {
    access_token: await issueAccessToken(config.auth.jwtSecret, config.auth.accessTokenTtlSeconds, { userId: user.id, tenantId: user.tenantId, role: user.role }),
    refresh_token: refresh.token,
    token_type: 'Bearer' as const,
    expires_in: config.auth.accessTokenTtlSeconds,
    user: { id: user.id, email: user.email, name: user.name, tenant_id: user.tenantId, role: user.role },
  };
}

/**
 * Rotates a refresh token: the presented one is revoked and a new one of the same family issued.
 * Presenting an already revoked token means it was stolen or replayed: the whole family is revoked.
 */
export async function refreshTokens(db: Db, config: Readonly<Config>, token: string, ip: string) {
  const outcome = await db.transaction().execute(async (transaction) => {
    const row = await transaction.selectFrom('refresh_tokens')
      .innerJoin('users', 'users.id', 'refresh_tokens.user_id')
      .innerJoin('memberships', (join) => join.onRef('memberships.user_id', '=', 'refresh_tokens.user_id').onRef('memberships.tenant_id', '=', 'refresh_tokens.tenant_id'))
      .select(['refresh_tokens.id', 'refresh_tokens.family_id', 'refresh_tokens.revoked_at', 'refresh_tokens.expires_at', 'refresh_tokens.tenant_id',
        'users.id as user_id', 'users.email', 'users.name', 'users.is_active', 'memberships.role'])
      .where('refresh_tokens.token_hash', '=', hashRefreshToken(token))
      .forUpdate('refresh_tokens')
      .executeTakeFirst();
    if (!row) return { kind: 'invalid' as const };
    if (row.revoked_at) {
      await transaction.updateTable('refresh_tokens').set({ revoked_at: sql`now()` as never })
        .where('family_id', '=', row.family_id).where('revoked_at', 'is', null).execute();
      return { kind: 'reused' as const, row };
    }
    if (row.expires_at.getTime() <= Date.now() || !row.is_active) return { kind: 'invalid' as const };
    await transaction.updateTable('refresh_tokens').set({ revoked_at: sql`now()` as never }).where('id', '=', row.id).execute();
    return { kind: 'rotated' as const, row };
  });
  if (outcome.kind === 'reused') {
    await recordAudit(db, { type: 'refresh_reuse_detected', userId: outcome.row.user_id, tenantId: outcome.row.tenant_id, ip, details: { family_id: outcome.row.family_id } });
  }
  if (outcome.kind !== 'rotated') throw authenticationError('Invalid or expired token', true);
  const { row } = outcome;
  await recordAudit(db, { type: 'token_refreshed', userId: row.user_id, tenantId: row.tenant_id, ip });
  return issueTokenPair(db, config, { id: row.user_id, email: row.email, name: row.name, tenantId: row.tenant_id, role: row.role }, row.family_id);
}
