import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import { ensureOwnedTask } from '../auth/ownership.ts';
import type { Db } from '../db/database.ts';
import type { NewTask, TaskRow, TaskStatus } from '../db/schema.ts';
import { usageTotals } from '../llm/usage-totals.ts';
import type { SessionClaim } from '../sessions/resolve-session.ts';

export type NewQueuedTask = Pick<NewTask, 'id' | 'query' | 'requested_mode' | 'token_budget'> & {
  context: Record<string, unknown>;
  options: Record<string, unknown>;
};

/**
 * Finds or creates the caller's session (`claim`) and inserts the QUEUED task in it: one statement, one commit.
 * `created`: the row this submission stored, unset when the id named a task written before (an idempotent retry).
 */
export async function insertTaskWithSession(db: Db, caller: Caller, claim: SessionClaim, task: NewQueuedTask): Promise<{ sessionId: string; createdAt: Date; created?: TaskRow }> {
  const { rows } = await sql<TaskRow & { created: boolean }>`
    select (r.task).*, r.created from submit_task_row(
      ${caller.tenantId}::uuid, ${caller.userId}::uuid, ${claim.sessionId}::uuid, ${claim.externalId}::text, ${claim.newId}::uuid,
      ${claim.tokenBudget}::bigint, ${claim.ttlDays}::integer, ${JSON.stringify(claim.context)}::jsonb,
      ${task.id}::uuid, ${task.query}::text, ${task.requested_mode ?? null}::text, ${JSON.stringify(task.context)}::jsonb,
      ${JSON.stringify(task.options)}::jsonb, ${task.token_budget ?? null}::bigint) r`.execute(db);
  const { created, ...row } = rows[0];
  return { sessionId: row.session_id, createdAt: row.created_at, ...(created ? { created: row } : {}) };
}

/** A task of the caller's tenant that the caller owns, with its session's custom id. */
export async function findOwnedTask(db: Db, caller: Caller, taskId: string): Promise<TaskRow & { session_external_id: string | null }> {
  const task = await db.selectFrom('tasks')
    .innerJoin('sessions', 'sessions.id', 'tasks.session_id')
    .selectAll('tasks')
    .select('sessions.external_id as session_external_id')
    .where('tasks.id', '=', taskId)
    .where('tasks.tenant_id', '=', caller.tenantId)
    .executeTakeFirst();
  return ensureOwnedTask(caller, task);
}


export interface UsageBreakdownRow {
  provider: string;
  model: string;
  executions: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}

export async function usageBreakdown(db: Db, taskId: string): Promise<UsageBreakdownRow[]> {
  const { rows } = await sql<UsageBreakdownRow>`
    select provider, model, count(*)::int as executions,
           sum(input_tokens)::int as input_tokens, sum(output_tokens)::int as output_tokens,
           sum(total_tokens)::int as total_tokens, sum(cached_input_tokens)::int as cached_input_tokens,
           sum(cache_write_tokens)::int as cache_write_tokens,
           sum(cost_usd)::float8 as cost_usd
    from usage_records where task_id = ${taskId}
    group by provider, model
    order by sum(cost_usd) desc, sum(total_tokens) desc`.execute(db);
  return rows;
}

export interface TaskListFilter {
  limit: number;
  offset: number;
  status?: TaskStatus;
  sessionId?: string;
}

export interface TaskListRow {
  id: string;
  query: string;
  status: TaskStatus;
  mode: string | null;
  created_at: Date;
  completed_at: Date | null;
  total_tokens: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

export async function listTasks(db: Db, caller: Caller, filter: TaskListFilter): Promise<TaskListRow[]> {
  let query = db.selectFrom('tasks')
    .select(['tasks.id', 'tasks.query', 'tasks.status', sql<string | null>`coalesce(tasks.mode, tasks.requested_mode)`.as('mode'),
      'tasks.created_at', 'tasks.completed_at'])
    .select(sql<number | null>`usage.total_tokens`.as('total_tokens'))
    .select(sql<number | null>`usage.input_tokens`.as('input_tokens'))
    .select(sql<number | null>`usage.output_tokens`.as('output_tokens'))
    .select(sql<number | null>`usage.cost_usd`.as('cost_usd'))
    // A task without calls lists no usage (nulls), not zeros.
    .leftJoin(sql<{ total_tokens: number }>`lateral (
      select * from (${usageTotals('task_id', sql.ref('tasks.id'))}) totals where calls > 0)`.as('usage'), (join) => join.onTrue())
    .where('tasks.tenant_id', '=', caller.tenantId)
    .where('tasks.user_id', '=', caller.userId);
  if (filter.status) query = query.where('tasks.status', '=', filter.status);
  if (filter.sessionId) query = query.where('tasks.session_id', '=', filter.sessionId);
  return query.orderBy('tasks.created_at', 'desc').orderBy('tasks.id', 'desc')
    .limit(filter.limit).offset(filter.offset).execute();
}

export async function countTasks(db: Db, caller: Caller, filter: TaskListFilter): Promise<number> {
  let query = db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.sessionId) query = query.where('session_id', '=', filter.sessionId);
  return Number((await query.executeTakeFirstOrThrow()).count);
}
