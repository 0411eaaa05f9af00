import { sql, type RawBuilder } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { SessionRow, TaskStatus } from '../db/schema.ts';
import { toTaskEvent, type TaskEvent } from '../events/append-event.ts';
import { ensureOwned } from '../tasks/queries.ts';
import { isUuid } from './resolve-session.ts';

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
}

/**
 * The caller's live sessions, newest first, with their computed fields. Tokens and cost are sums of
 * usage rows; successful = COMPLETED, failed = FAILED or TIMEOUT (a cancelled task is neither).
 */
export async function selectSessionSummaries(db: Db, caller: Caller, page: { limit: number; offset: number; sessionId?: string }): Promise<SessionSummaryRow[]> {
  const { rows } = await sql<SessionSummaryRow>`
    select s.id, s.user_id, s.external_id, s.title, s.context, s.token_budget, s.created_at, s.updated_at, s.expires_at,
      coalesce(usage.tokens, 0)::bigint as tokens_used, coalesce(usage.cost, 0)::float8 as total_cost_usd,
      counts.task_count, counts.successful_tasks, counts.failed_tasks,
      coalesce(counts.last_activity_at, s.created_at) as last_activity_at,
      latest.query as latest_task_query, latest.status as latest_task_status,
      first.mode as first_task_mode, first.query as first_task_query,
      coalesce(s.context->'force_research' = 'true'::jsonb or first.context->'force_research' = 'true'::jsonb, false) as is_research_session
    from sessions s
    cross join lateral (
      select count(*)::int as task_count,
        (count(*) filter (where status = 'COMPLETED'))::int as successful_tasks,
        (count(*) filter (where status in ('FAILED', 'TIMEOUT')))::int as failed_tasks,
        greatest(max(created_at), max(completed_at)) as last_activity_at
      from tasks where session_id = s.id) counts
    left join lateral (select sum(total_tokens) as tokens, sum(cost_usd) as cost from usage_records where session_id = s.id) usage on true
    left join lateral (select query, status from tasks where session_id = s.id order by created_at desc, id desc limit 1) latest on true
    left join lateral (
      select query, coalesce(mode, requested_mode) as mode, context from tasks where session_id = s.id order by created_at, id limit 1) first on true
    where ${liveSessionsOf(caller)} ${page.sessionId === undefined ? sql`` : sql`and s.id = ${page.sessionId}`}
    order by s.created_at desc, s.id desc
    limit ${page.limit} offset ${page.offset}`.execute(db);
  return rows;
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
}

/** A session's tasks in chronological order, with their usage sums; all of them, or one page. */
export async function selectSessionTasks(db: Db, sessionId: string, page?: { limit: number; offset: number }): Promise<SessionTaskRow[]> {
  const { rows } = await sql<SessionTaskRow>`
    select t.id, t.query, t.status, coalesce(t.mode, t.requested_mode) as mode, t.result, t.error, t.metadata, t.agents_used,
      t.created_at, t.started_at, t.completed_at,
      coalesce(usage.tokens, 0)::bigint as total_tokens, coalesce(usage.cost, 0)::float8 as total_cost_usd,
      (select count(*) from task_events e where e.task_id = t.id and e.type = 'TOOL_INVOKED')::int as tools_invoked
    from tasks t
    left join lateral (select sum(total_tokens) as tokens, sum(cost_usd) as cost from usage_records where task_id = t.id) usage on true
    where t.session_id = ${sessionId}
    order by t.created_at, t.id
    ${page ? sql`limit ${page.limit} offset ${page.offset}` : sql``}`.execute(db);
  return rows;
}

export async function countSessionTasks(db: Db, sessionId: string): Promise<number> {
  const row = await db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('session_id', '=', sessionId).executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The events of these tasks without token deltas, in seq order per task; at most `limit` of them. */
export async function selectTurnEvents(db: Db, taskIds: string[], limit: number): Promise<TaskEvent[]> {
  if (taskIds.length === 0) return [];
  const rows = await db.selectFrom('task_events')
    .select(['task_id', 'seq', 'stream_id', 'type', 'agent_id', 'message', 'payload', 'created_at'])
    .where('task_id', 'in', taskIds)
    .where('type', '!=', 'LLM_PARTIAL')
    .orderBy('task_id').orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map(toTaskEvent);
}
