import { sql, type Insertable, type Updateable } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { ScheduleRow, SchedulesTable, ScheduleStatus, TaskStatus } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { usageTotals } from '../llm/usage-totals.ts';

/**
 * The caller's live schedule. Another user's, another tenant's and a deleted one are all simply not found
 * (spec 4.7: schedules are isolated per user and tenant).
 */
export async function findOwnedSchedule(db: Db, caller: Caller, id: string): Promise<ScheduleRow> {
  const row = await ownedSchedules(db, caller).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Schedule not found');
  return row;
}

const ownedSchedules = (db: Db, caller: Caller) => db.selectFrom('schedules')
  .where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId).where('deleted_at', 'is', null);

/**
 * Inserts a schedule unless the owner already has `limit` of them: false then. Creations by one user are
 * serialised by a lock on their id, so two at the limit cannot both pass the count. A retried creation (the
 * same id, from its Idempotency-Key) finds its schedule and inserts nothing.
 */
export async function insertScheduleWithinLimit(db: Db, schedule: Insertable<SchedulesTable>, limit: number): Promise<boolean> {
  return db.transaction().execute(async (transaction) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`schedules:${schedule.user_id}`}, 0))`.execute(transaction);
    const { count, exists } = await transaction.selectFrom('schedules')
      .select((eb) => [eb.fn.countAll<string>().as('count'), sql<boolean>`bool_or(id = ${schedule.id})`.as('exists')])
      .where('tenant_id', '=', schedule.tenant_id).where('user_id', '=', schedule.user_id).where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (exists) return true;
    if (Number(count) >= limit) return false;
    await transaction.insertInto('schedules').values(schedule).execute();
    return true;
  });
}

/**
 * The key a schedule's runs act as: the one the caller used to create, change or resume it (null signed in).
 * Whoever sets what a schedule does or lets it run again vouches for it with their credential (run-as.ts).
 */
export const runsAsKey = (caller: Caller) => caller.apiKeyId ?? null;

/** Changes the caller's live schedule; undefined when there is none. */
export async function updateOwnedSchedule(db: Db, caller: Caller, id: string, changes: Updateable<SchedulesTable>): Promise<ScheduleRow | undefined> {
  return db.updateTable('schedules').set({ ...changes, updated_at: sql`now()` as never })
    .where('id', '=', id).where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId).where('deleted_at', 'is', null)
    .returningAll().executeTakeFirst();
}

export interface ScheduleListFilter { page: number; pageSize: number; status?: ScheduleStatus }

export async function listOwnedSchedules(db: Db, caller: Caller, filter: ScheduleListFilter): Promise<{ rows: ScheduleRow[]; total: number }> {
  let query = ownedSchedules(db, caller);
  if (filter.status) query = query.where('status', '=', filter.status);
  const [rows, { count }] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc')
      .limit(filter.pageSize).offset((filter.page - 1) * filter.pageSize).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count) };
}

export interface ScheduleRunRow {
  scheduled_for: Date;
  triggered_at: Date;
  skip_reason: string | null;
  task_id: string | null;
  query: string;
  status: TaskStatus | null;
  result: string | null;
  error: string | null;
  model_used: string | null;
  provider: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  total_tokens: number;
  cost_usd: number;
}

/** A schedule's runs, newest occurrence first, each with its task and the task's usage. */
export async function listScheduleRuns(db: Db, schedule: ScheduleRow, page: number, pageSize: number): Promise<{ rows: ScheduleRunRow[]; total: number }> {
  const [{ rows }, { count }] = await Promise.all([
    sql<ScheduleRunRow>`
      select r.scheduled_for, r.triggered_at, r.skip_reason, r.task_id, coalesce(t.query, ${schedule.task_query}) as query,
        t.status, t.result, t.error, t.model_used, t.provider, t.started_at, t.completed_at,
        coalesce(usage.total_tokens, 0)::int8 as total_tokens, coalesce(usage.cost_usd, 0)::float8 as cost_usd
      from schedule_runs r
      left join tasks t on t.id = r.task_id
      left join lateral (${usageTotals('task_id', sql.ref('r.task_id'))}) usage on true
      where r.schedule_id = ${schedule.id}
      order by r.scheduled_for desc
      limit ${pageSize} offset ${(page - 1) * pageSize}`.execute(db),
    db.selectFrom('schedule_runs').select((eb) => eb.fn.countAll<string>().as('count')).where('schedule_id', '=', schedule.id).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count) };
}
