import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import { findLiveSession } from './queries.ts';

/** The caller's live session addressed by UUID or custom id, as used by list filters. */
export async function findSessionIdForFilter(db: Db, caller: Caller, sessionId: string): Promise<string | undefined> {
  const session = await findLiveSession(db, caller, sessionId);
  return session?.user_id === caller.userId ? session.id : undefined;
}
