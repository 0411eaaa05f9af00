import { sql } from 'kysely';
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { recordUsage } from '../../llm/record-usage.ts';
import type { ModelRegistry } from '../../llm/provider-registry.ts';
import { streamModelText } from '../../llm/stream-model-text.ts';
import { usedTokens } from '../../llm/usage-totals.ts';
import { titleFromModel, titleFromQuery } from './title-text.ts';
import { isOpenAiConversation } from '../runtime/started-context.ts';
import { untitledSession, type SessionTitleRequest } from '../../task-state/lifecycle.ts';

export const TITLE_AGENT_ID = 'title_generator';
const TITLE_MAX_OUTPUT_TOKENS = 32;
/** The start of a long query says enough for a title, and keeps the call cheap. */
const TITLE_QUERY_CHARACTERS = 2_000;
const TITLE_TIMEOUT_MS = 30_000;
/** Titles wait behind tasks: a few at a time per process, whatever the load. */
const TITLE_CONCURRENCY = 2;
const SWEEP_BATCH = 20;
const TITLE_INSTRUCTIONS = 'Write a title for the conversation that starts with the message below: 3 to 6 words '
  + '(5 to 15 characters for Chinese, Japanese or Korean), in the language of the message, without quotes, '
  + 'emoji or final punctuation. Answer with the title only.';

export type TitledTask = { id: string; sessionId: string; query: string; context: Record<string, unknown> };

/**
 * What titles a session that has none: a mark for the titler with the completed task whose query names it, made
 * by the statement that completes the task (task-state/lifecycle.ts markCompleted), so the request is never lost
 * and costs no round trip of its own. A conversation of the OpenAI-compatible layer is named by its query at once
 * instead: its callers never see the title, and a model call for it would double the provider calls of every
 * one-off completion, each taking its share of the deployment's rate limit.
 */
export function sessionTitleRequest(task: TitledTask): SessionTitleRequest {
  return { sessionId: task.sessionId, fromTaskId: task.id, ...(isOpenAiConversation(task.context) ? { title: titleFromQuery(task.query) } : {}) };
}

/** The same request on its own, for a workflow started before tasks asked in their completion (session-title.ts). */
export async function requestSessionTitle(db: Db, task: TitledTask): Promise<void> {
  await untitledSession(db, sessionTitleRequest(task)).execute();
}


export interface SessionTitler {
  /**
   * A task completed here: title its session soon, unless its completion named the session itself (an OpenAI-layer
   * conversation), when the titler has nothing to look for.
   */
  nudge(task: TitledTask): void;
  /** Titles every session waiting for one (at start-up and periodically, for requests from any process). */
  sweep(): Promise<void>;
}

export interface TitlerDeps {
  config: Readonly<Config>;
  db: Db;
  models: ModelRegistry;
  logger: Logger;
}

interface AwaitingTitle {
  session_id: string;
  tenant_id: string;
  user_id: string;
  query: string;
  context: Record<string, unknown>;
}

/**
 * Generates session titles off the tasks' path (issue 13): no task's worker waits for a title, and the
 * title's model usage is the session's (a usage row without a task). Two processes may title the same
 * session at once; the usage row is keyed by the session and a set title is never replaced, so that
 * costs at most one extra short call.
 */
export function createSessionTitler(deps: TitlerDeps): SessionTitler {
  const limit = pLimit(TITLE_CONCURRENCY);
  let running: Promise<void> | undefined;
  let again = false;

  const sweep = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        const waiting = await findAwaitingTitles(deps.db);
        await Promise.all(waiting.map((session) => limit(() => titleSession(deps, session))));
        if (waiting.length === SWEEP_BATCH) again = true;
      } while (again);
    })().finally(() => { running = undefined; });
    return running;
  };

  return {
    nudge(task) {
      if (sessionTitleRequest(task).title !== undefined) return;
      sweep().catch((error: unknown) => deps.logger.warn({ err: error }, 'session titles not generated; the next sweep retries'));
    },
    sweep,
  };
}

async function findAwaitingTitles(db: Db): Promise<AwaitingTitle[]> {
  const { rows } = await sql<AwaitingTitle>`
    select s.id as session_id, s.tenant_id, s.user_id, t.query, t.context
    from sessions s join tasks t on t.id = s.title_from_task
    where s.title is null and s.title_from_task is not null
    order by s.updated_at limit ${SWEEP_BATCH}`.execute(db);
  return rows;
}

async function titleSession(deps: TitlerDeps, session: AwaitingTitle): Promise<void> {
  const callKey = `session:${session.session_id}:title`;
  const generated = await generateTitle(deps, session);
  await deps.db.transaction().execute(async (transaction) => {
    if (generated.usage) {
      await recordUsage(transaction, callKey, { taskId: null, tenantId: session.tenant_id, userId: session.user_id, sessionId: session.session_id }, TITLE_AGENT_ID, generated.usage);
    }
    // A title its owner set meanwhile stays.
    await transaction.updateTable('sessions').set({ title: sql`coalesce(title, ${generated.title})`, title_from_task: null })
      .where('id', '=', session.session_id).execute();
  });
}

/** The model's title when the session's budget has room and the call succeeds; the query's start otherwise. */
async function generateTitle(deps: TitlerDeps, session: AwaitingTitle) {
  const query = session.query.slice(0, TITLE_QUERY_CHARACTERS);
  const fallback = { title: titleFromQuery(session.query), usage: undefined };
  try {
    if (!await sessionHasRoom(deps.db, session.session_id, Math.ceil((TITLE_INSTRUCTIONS.length + query.length) / 4) + TITLE_MAX_OUTPUT_TOKENS)) return fallback;
    const result = await streamModelText(deps.models, {
      selection: {
        modelTier: session.context.model_tier as 'small' | 'medium' | 'large' | undefined,
        modelOverride: session.context.model_override as string | undefined,
        providerOverride: session.context.provider_override as string | undefined,
      },
      system: TITLE_INSTRUCTIONS,
      messages: [{ role: 'user', content: query }],
      maxOutputTokens: TITLE_MAX_OUTPUT_TOKENS,
      abortSignal: AbortSignal.timeout(TITLE_TIMEOUT_MS),
    });
    return { title: titleFromModel(result.text) ?? fallback.title, usage: result };
  } catch (error) {
    deps.logger.warn({ session_id: session.session_id, err: error }, 'title generation failed; using the query');
    return fallback;
  }
}

/** Spent and reserved tokens leave room for the call under the session's budget. */
async function sessionHasRoom(db: Db, sessionId: string, tokens: number): Promise<boolean> {
  const { rows } = await sql<{ room: number }>`
    select s.token_budget - ${usedTokens('session_id', sql.ref('s.id'))} as room from sessions s where s.id = ${sessionId}`.execute(db);
  return rows.length > 0 && Number(rows[0].room) >= tokens;
}
