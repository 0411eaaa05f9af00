import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest } from '../errors.ts';
import { findOwnedSession, setSessionTitle } from './queries.ts';
import { cleanTitle, countCharacters, hasVisibleText, MAX_TITLE_CHARACTERS } from '../workflows/memory/title-text.ts';

/** PATCH /api/v1/sessions/{id}: the owner's title replaces any title, generated or not. */
export async function renameSession(deps: Deps, caller: Caller, sessionId: string, requestedTitle: string) {
  const title = validTitle(requestedTitle);
  const session = await findOwnedSession(deps.db, caller, sessionId);
  await setSessionTitle(deps.db, session.id, title);
  return { session_id: session.id, title };
}

/** Spec 4.6: trimmed, control characters removed, then 1-60 characters (code points, not bytes). */
function validTitle(requestedTitle: string): string {
  const title = cleanTitle(requestedTitle);
  if (!hasVisibleText(title)) throw badRequest('title must not be empty (after trimming and removing control characters)');
  const length = countCharacters(title);
  if (length > MAX_TITLE_CHARACTERS) throw badRequest(`title must be at most ${MAX_TITLE_CHARACTERS} characters (got ${length})`);
  return title;
}
