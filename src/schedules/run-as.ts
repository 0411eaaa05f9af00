import { keyPauseReason, keyStopReason } from '../auth/api-keys.ts';
import { scopesWithinRole, type Caller } from '../auth/caller.ts';
import { memberCaller } from '../auth/resolve-credential.ts';
import type { Db } from '../db/database.ts';
import type { ScheduleRow } from '../db/schema.ts';

const OWNER_GONE = 'its owner is no longer an active member of the tenant';

/** Why a run cannot act: recorded with the skipped occurrence (`refused`), and as the schedule's pause reason. */
export interface RunRefusal { refused: string; pauseReason: string }

/**
 * Whom a scheduled run acts as. A schedule made (or last changed or resumed) with an API key acts as that key, as
 * a request with it would: the key's scopes within its user's current role, and the key's rate limit. One made
 * signed in acts as its user. Neither acts once the user has left the tenant, nor as a revoked or expired key.
 */
export async function runAs(db: Db, schedule: Pick<ScheduleRow, 'user_id' | 'tenant_id' | 'api_key_id'>, now: Date): Promise<Caller | RunRefusal> {
  const member = await memberCaller(db, schedule.user_id, schedule.tenant_id, 'schedule');
  if (!member) return { refused: `refused: ${OWNER_GONE}`, pauseReason: `Auto-paused: ${OWNER_GONE}` };
  if (schedule.api_key_id === null) return member;
  const key = await db.selectFrom('api_keys').select(['prefix', 'scopes', 'revoked_at', 'expires_at'])
    .where('id', '=', schedule.api_key_id).executeTakeFirstOrThrow();
  const unusable = key.revoked_at ? 'was revoked' : key.expires_at && key.expires_at <= now ? 'expired' : undefined;
  if (unusable) {
    const reason = keyStopReason(key.prefix, unusable);
    return { refused: `refused: ${reason}`, pauseReason: keyPauseReason(reason) };
  }
  return { ...member, scopes: scopesWithinRole(key.scopes, member.role), apiKeyId: schedule.api_key_id };
}
