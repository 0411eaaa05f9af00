import { createHash } from 'node:crypto';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import { badRequest } from '../errors.ts';
import { SESSION_ID_PATTERN } from '../tasks/schemas.ts';
import type { ChatTask } from './chat-task.ts';

export interface ChatSession {
  sessionId: string;
  /** Tell the client the id: the session is new, or the derived id collided with another conversation. */
  announce: boolean;
}

const MAX_COLLISIONS = 20;

/**
 * The conversation's session (spec 4.11): `X-Session-ID` when given; otherwise an id derived, per user,
 * from a hash of the system message and the first user message (or the `user` field). A derived id whose
 * session holds a different conversation (its earlier questions do not match this one's) is a collision:
 * the next free suffix is used instead.
 */
export async function resolveChatSession(db: Db, caller: Caller, header: string | undefined, chat: ChatTask, user: string | undefined): Promise<ChatSession> {
  if (header !== undefined) {
    if (!new RegExp(SESSION_ID_PATTERN).test(header)) throw badRequest('invalid X-Session-ID: use 1-128 letters, digits, ":", "_", "-" or "."');
    return { sessionId: header, announce: (await sessionQueries(db, caller, header)) === undefined };
  }
  const base = `chat-${createHash('sha256').update(JSON.stringify([user ?? '', chat.systemPrompt ?? '', chat.firstUserMessage])).digest('hex').slice(0, 24)}`;
  const earlierQuestions = chat.history.filter((message) => message.role === 'user').map((message) => message.content);
  for (let attempt = 0; attempt < MAX_COLLISIONS; attempt += 1) {
    const candidate = attempt === 0 ? base : `${base}-${attempt}`;
    const queries = await sessionQueries(db, caller, candidate);
    if (queries === undefined) return { sessionId: candidate, announce: true };
    if (sameQuestions(queries, earlierQuestions)) return { sessionId: candidate, announce: attempt > 0 };
  }
  throw badRequest('too many conversations share this opening; send X-Session-ID');
}

/** The queries of the caller's live session with this custom id, oldest first; undefined when there is none. */
async function sessionQueries(db: Db, caller: Caller, externalId: string): Promise<string[] | undefined> {
  const session = await db.selectFrom('sessions').select('id')
    .where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId).where('external_id', '=', externalId)
    .where('deleted_at', 'is', null).executeTakeFirst();
  if (!session) return undefined;
  const tasks = await db.selectFrom('tasks').select('query').where('session_id', '=', session.id).orderBy('created_at').execute();
  return tasks.map((task) => task.query);
}

const sameQuestions = (stored: string[], incoming: string[]) =>
  stored.length === incoming.length && stored.every((query, index) => query === incoming[index].trim());
