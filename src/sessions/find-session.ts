import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import { isUuid } from './resolve-session.ts';

/** The caller's live session addressed by UUID or custom id, as used by list filters. */
export async function findSessionIdForFilter(db: Db, caller: Caller, sessionId: string): Promise<string | undefined> {
  const row = await db.selectFrom('sessions').select('id')
    .where('tenant_id', '=', caller.tenantId)
    .where('user_id', '=', caller.userId)
    .where('deleted_at', 'is', null)
    .where((eb) => isUuid(sessionId) ? eb('id', '=', sessionId.toLowerCase()) : eb('external_id', '=', sessionId))
    .executeTakeFirst();
  return row?.id;
}
