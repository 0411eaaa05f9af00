import { sql, type RawBuilder } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { SessionRow, TaskStatus } from '../db/schema.ts';
import { toTaskEvent, type TaskEvent } from '../events/append-event.ts';
import { ensureOwned } from '../auth/ownership.ts';
import { usageTotals } from '../llm/usage-totals.ts';
import { isUuid } from '../uuid.ts';
import { cutText, FIELD_TEXT_BYTES, PAGE_TEXT_BYTES, PREVIEW_CHARACTERS } from './text-budget.ts';

/**
 * The sessions an id names for the caller: a UUID within the caller's tenant (ownership is checked by the
 * service, so another user's answers 403), or a custom id among the caller's own (custom ids are per user).
 */
function addressSession(db: Db, caller: Caller, sessionId: string) {
  return db.selectFrom('sessions').selectAll()
    .where('tenant_id', '=', caller.tenantId)
    .where((eb) => isUuid(sessionId)
      ? eb('id', '=', sessionId.toLowerCase())
      : eb.and([eb('user_id', '=', caller.userId), eb('external_id', '=', sessionId)]));
}

/** A session that is neither deleted nor expired: every read sees only these (spec 3.4). */
export async function findLiveSession(db: Db, caller: Caller, sessionId: string): Promise<SessionRow | undefined> {
  return addressSession(db, caller, sessionId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
}

/** The caller's live session, else 404 (403 for another user's UUID, as for tasks). */
export async function findOwnedSession(db: Db, caller: Caller, sessionId: string): Promise<SessionRow> {
  return ensureOwned(await findLiveSession(db, caller, sessionId), caller, 'session');
}

/** Deleted sessions included (DELETE is idempotent), the live one first when a custom id names several. */
export async function findSessionForDelete(db: Db, caller: Caller, sessionId: string): Promise<SessionRow | undefined> {
  return addressSession(db, caller, sessionId).orderBy(sql`deleted_at is null`, 'desc').executeTakeFirst();
}

export async function softDeleteSession(db: Db, sessionId: string, deletedBy: string): Promise<void> {
  await db.updateTable('sessions').set({ deleted_at: sql`now()` as never, deleted_by: deletedBy })
    .where('id', '=', sessionId).where('deleted_at', 'is', null).execute();
}

export async function setSessionTitle(db: Db, sessionId: string, title: string): Promise<void> {
  await db.updateTable('sessions').set({ title, updated_at: sql`now()` as never }).where('id', '=', sessionId).execute();
}

export interface SessionSummaryRow {
  id: string;
  user_id: string;
  external_id: string | null;
  title: string | null;
  context: Record<string, unknown>;
  token_budget: number;
  created_at: Date;
  updated_at: Date;
  expires_at: Date | null;
  tokens_used: number;
  total_cost_usd: number;
  task_count: number;
  successful_tasks: number;
  failed_tasks: number;
  last_activity_at: Date;
  latest_task_query: string | null;
  latest_task_status: TaskStatus | null;
  first_task_mode: string | null;
  first_task_query: string | null;
  is_research_session: boolean;
  research_strategy: string | null;
}

/**
 * The caller's live sessions, newest first, with their computed fields. Tokens and cost are sums of
 * usage rows; successful = COMPLETED, failed = FAILED or TIMEOUT (a cancelled task is neither).
 */
export async function selectSessionSummaries(db: Db, caller: Caller, page: { limit: number; offset: number; sessionId?: string }): Promise<SessionSummaryRow[]> {
  const { rows } = await sql<SessionSummaryRow>`
    select s.id, s.user_id, s.external_id, s.title, s.context, s.token_budget, s.created_at, s.updated_at, s.expires_at,
      usage.total_tokens as tokens_used, usage.cost_usd as total_cost_usd,
      counts.task_count, counts.successful_tasks, counts.failed_tasks,
      coalesce(counts.last_activity_at, s.created_at) as last_activity_at,
      ${preview(sql`latest.query`)} as latest_task_query, latest.status as latest_task_status,
      first.mode as first_task_mode, ${preview(sql`first.query`)} as first_task_query,
      coalesce(s.context->'force_research' = 'true'::jsonb or first.context->'force_research' = 'true'::jsonb, false) as is_research_session,
      coalesce(s.context->>'research_strategy', first.context->>'research_strategy') as research_strategy
    from sessions s
    cross join lateral (
      select count(*)::int as task_count,
        (count(*) filter (where status = 'COMPLETED'))::int as successful_tasks,
        (count(*) filter (where status in ('FAILED', 'TIMEOUT')))::int as failed_tasks,
        greatest(max(created_at), max(completed_at)) as last_activity_at
      from tasks where session_id = s.id) counts
    left join lateral (${usageTotals('session_id', sql.ref('s.id'))}) usage on true
    left join lateral (select query, status from tasks where session_id = s.id order by created_at desc, id desc limit 1) latest on true
    left join lateral (
      select query, coalesce(mode, requested_mode) as mode, context from tasks where session_id = s.id order by created_at, id limit 1) first on true
    where ${liveSessionsOf(caller)} ${page.sessionId === undefined ? sql`` : sql`and s.id = ${page.sessionId}`}
    order by s.created_at desc, s.id desc
    limit ${page.limit} offset ${page.offset}`.execute(db);
  return rows;
}

/**
 * A query in a session summary: its first PREVIEW_CHARACTERS characters and "…" when longer, so a page of
 * 100 summaries never fetches 100 whole queries (each may be as large as a request body).
 */
function preview(column: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql`case when char_length(left(${column}, ${PREVIEW_CHARACTERS + 1})) > ${PREVIEW_CHARACTERS}
    then left(${column}, ${PREVIEW_CHARACTERS}) || '…' else ${column} end`;
}

export async function countSessions(db: Db, caller: Caller): Promise<number> {
  const { rows } = await sql<{ count: number }>`select count(*)::int as count from sessions s where ${liveSessionsOf(caller)}`.execute(db);
  return rows[0].count;
}

function liveSessionsOf(caller: Caller): RawBuilder<unknown> {
  return sql`s.tenant_id = ${caller.tenantId} and s.user_id = ${caller.userId} and s.deleted_at is null
    and (s.expires_at is null or s.expires_at > now())`;
}

export interface SessionTaskRow {
  id: string;
  query: string;
  status: TaskStatus;
  mode: string | null;
  result: string | null;
  error: string | null;
  metadata: Record<string, unknown>;
  agents_used: number;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  total_tokens: number;
  total_cost_usd: number;
  tools_invoked: number;
  /** Alone over the page budget, so its long texts come cut and marked (text-budget.ts). */
  is_oversize: boolean;
}

interface MeasuredTaskRow extends SessionTaskRow {
  query_bytes: number;
  result_bytes: number | null;
  error_bytes: number | null;
}

/** What a page's text budget counts per task: the history item's texts, or the turn's with its events. */
export type TaskMeasure = 'history-item' | 'turn';

/**
 * One page of a session's tasks in chronological order, with their usage sums. The page ends before the
 * task that would take its stored text past PAGE_TEXT_BYTES (sizes are read with octet_length, which does
 * not fetch the text); the first task always comes, its texts cut in SQL when it alone is over.
 */
export async function selectSessionTasks(db: Db, sessionId: string, page: { limit: number; offset: number }, measure: TaskMeasure): Promise<SessionTaskRow[]> {
  const cut = (column: RawBuilder<unknown>) => sql`case when f.is_oversize then left(${column}, ${FIELD_TEXT_BYTES}) else ${column} end`;
  const { rows } = await sql<MeasuredTaskRow>`
    with page as (
      select id, created_at from tasks where session_id = ${sessionId} order by created_at, id limit ${page.limit} offset ${page.offset}
    ), sized as (
      select p.id, p.created_at, ${measure === 'turn' ? turnBytes : historyItemBytes} as text_bytes
      from page p join tasks t on t.id = p.id
    ), fitting as (
      select id, created_at, text_bytes > ${PAGE_TEXT_BYTES} as is_oversize,
        row_number() over running as position, sum(text_bytes) over running as running_bytes
      from sized window running as (order by created_at, id)
    )
    select t.id, ${cut(sql`t.query`)} as query, t.status, coalesce(t.mode, t.requested_mode) as mode,
      ${cut(sql`t.result`)} as result, ${cut(sql`t.error`)} as error, t.metadata, t.agents_used,
      t.created_at, t.started_at, t.completed_at,
      usage.total_tokens, usage.cost_usd as total_cost_usd,
      (select count(*) from task_events e where e.task_id = t.id and e.type = 'TOOL_INVOKED')::int as tools_invoked,
      f.is_oversize, octet_length(t.query) as query_bytes, octet_length(t.result) as result_bytes, octet_length(t.error) as error_bytes
    from fitting f
    join tasks t on t.id = f.id
    left join lateral (${usageTotals('task_id', sql.ref('t.id'))}) usage on true
    where f.position = 1 or f.running_bytes <= ${PAGE_TEXT_BYTES}
    order by f.created_at, f.id`.execute(db);
  return rows.map(({ query_bytes, result_bytes, error_bytes, ...row }) => row.is_oversize
    ? {
        ...row,
        query: cutText(row.query, query_bytes, row.id),
        result: row.result === null ? null : cutText(row.result, result_bytes!, row.id),
        error: row.error === null ? null : cutText(row.error, error_bytes!, row.id),
      }
    : row);
}

const historyItemBytes = sql`octet_length(t.query) + coalesce(octet_length(t.result), 0) + coalesce(octet_length(t.error), 0)
  + octet_length(t.metadata::text)`;

const turnBytes = sql`octet_length(t.query) + coalesce(octet_length(t.result), 0) + coalesce((
  select sum(coalesce(octet_length(e.message), 0) + coalesce(octet_length(e.payload::text), 0))
  from task_events e where e.task_id = t.id and e.type <> 'LLM_PARTIAL'), 0)`;

export async function countSessionTasks(db: Db, sessionId: string): Promise<number> {
  const row = await db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('session_id', '=', sessionId).executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The events of these turns without token deltas, in seq order per task; at most `limit` of them. An
 * oversize turn (then alone on its page) has its long messages cut like its other texts.
 */
export async function selectTurnEvents(db: Db, tasks: SessionTaskRow[], limit: number): Promise<TaskEvent[]> {
  if (tasks.length === 0) return [];
  const isOversize = tasks.some((task) => task.is_oversize);
  const rows = await db.selectFrom('task_events')
    .select(['task_id', 'seq', 'stream_id', 'type', 'agent_id', 'payload', 'created_at'])
    .select([
      (isOversize ? sql<string | null>`left(message, ${FIELD_TEXT_BYTES})` : sql<string | null>`message`).as('message'),
      sql<number | null>`octet_length(message)`.as('message_bytes'),
    ])
    .where('task_id', 'in', tasks.map((task) => task.id))
    .where('type', '!=', 'LLM_PARTIAL')
    .orderBy('task_id').orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map(({ message_bytes, ...row }) => (isOversize && row.message !== null
    ? toTaskEvent({ ...row, message: cutText(row.message, message_bytes!, row.task_id) })
    : toTaskEvent(row)));
}
