import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { badRequest } from '../errors.ts';
import type { TranscriptMessage } from './chat-messages.ts';
import { SESSION_ID_PATTERN } from '../id-formats.ts';
import type { ChatTask } from './chat-task.ts';

export interface ChatSession {
  /** What the task is submitted with: X-Session-ID, the UUID of the session the conversation continues, or undefined (a new one). */
  sessionId: string | undefined;
  /** Whether the client must be told the session the task landed in (spec 4.11: new sessions and collisions). */
  shouldAnnounce(sessionUuid: string): boolean;
  /** Records the answer the client was given, so that its next turn finds the session. Never throws. */
  rememberAnswer(sessionUuid: string, answer: TranscriptMessage): Promise<void>;
}

/**
 * The conversation's session (spec 4.11): `X-Session-ID` when given. Otherwise a request whose messages hold
 * no earlier turn opens a new conversation, and so a new session, however many share its opening; a later
 * turn continues the session in which its earlier messages (user, system prompt, every message before the
 * question, answers included) were answered, found with one query by a hash of them. See docs/decisions.md.
 */
export async function resolveChatSession(deps: Deps, caller: Caller, header: string | undefined, chat: ChatTask, user: string | undefined): Promise<ChatSession> {
  if (header !== undefined) {
    if (!new RegExp(SESSION_ID_PATTERN).test(header)) throw badRequest('invalid X-Session-ID: use 1-128 letters, digits, ":", "_", "-" or "."');
    const existed = await hasLiveSession(deps, caller, header);
    return { sessionId: header, shouldAnnounce: () => !existed, rememberAnswer: async () => {} };
  }
  const key = continuationKey(user, chat);
  const continued = key === undefined ? undefined : await findTranscriptSession(deps, caller, key);
  return {
    sessionId: continued,
    shouldAnnounce: (sessionUuid) => sessionUuid !== continued,
    rememberAnswer: (sessionUuid, answer) => rememberTranscript(deps, caller, sessionUuid, answerKey(user, chat, answer)),
  };
}

/** The conversation up to its last answer: what an earlier request was answered with, when it continues one. */
function earlierTurns(transcript: TranscriptMessage[]): TranscriptMessage[] {
  return transcript.slice(0, transcript.findLastIndex((message) => message.role === 'assistant') + 1);
}

/** The key of the conversation a request continues: its messages up to the last answer; undefined for an opening. */
export function continuationKey(user: string | undefined, chat: ChatTask): string | undefined {
  const earlier = earlierTurns(chat.transcript);
  return earlier.length === 0 ? undefined : transcriptKey(user, chat.systemPrompt, earlier);
}

/** The key the client's next turn will look up: this request's messages and the answer it was given. */
export function answerKey(user: string | undefined, chat: ChatTask, answer: TranscriptMessage): string {
  return transcriptKey(user, chat.systemPrompt, [...chat.transcript, answer]);
}

/** Whitespace around a message is not part of it: clients trim what they send back. */
function transcriptKey(user: string | undefined, systemPrompt: string | undefined, messages: TranscriptMessage[]): string {
  const transcript = [user ?? '', systemPrompt?.trim() ?? '', messages.map((message) => [message.role, message.content.trim()])];
  return createHash('sha256').update(JSON.stringify(transcript)).digest('hex');
}

async function hasLiveSession(deps: Deps, caller: Caller, externalId: string): Promise<boolean> {
  const session = await deps.db.selectFrom('sessions').select('id')
    .where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId).where('external_id', '=', externalId)
    .where('deleted_at', 'is', null).executeTakeFirst();
  return session !== undefined;
}

/** Undefined when the transcript is unknown, or known from several sessions (undecidable). */
async function findTranscriptSession(deps: Deps, caller: Caller, key: string): Promise<string | undefined> {
  const { rows } = await sql<{ session_id: string | null }>`
    select session_id from chat_transcripts
    where tenant_id = ${caller.tenantId} and user_id = ${caller.userId} and transcript_key = ${key}`.execute(deps.db);
  return rows[0]?.session_id ?? undefined;
}

/** A transcript answered in a second session can no longer name one: it keeps no session. */
async function rememberTranscript(deps: Deps, caller: Caller, sessionUuid: string, key: string): Promise<void> {
  try {
    await sql`
      insert into chat_transcripts as c (tenant_id, user_id, transcript_key, session_id)
      values (${caller.tenantId}, ${caller.userId}, ${key}, ${sessionUuid})
      on conflict (tenant_id, user_id, transcript_key) do update
        set session_id = case when c.session_id = excluded.session_id then c.session_id end, updated_at = now()`.execute(deps.db);
  } catch (error) {
    // The answer is already the client's; its next turn merely starts a new session.
    deps.logger.warn({ err: error, session_id: sessionUuid }, 'chat transcript not remembered');
  }
}

/** Transcripts of conversations idle longer than a session lives name nothing worth continuing. */
export async function purgeIdleTranscripts(db: Db, idleDays: number): Promise<void> {
  await sql`delete from chat_transcripts where updated_at < now() - make_interval(days => ${idleDays})`.execute(db);
}
