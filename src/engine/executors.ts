import os from 'node:os';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { ExecutorsTable } from '../db/schema.ts';
import type { Selectable } from 'kysely';
import { APPLICATION_VERSION, BACKGROUND_QUEUE, INTERNAL_QUEUE, TASK_QUEUE } from './engine.ts';

type ExecutorRow = Selectable<ExecutorsTable>;

/** Who this process is: its engine executor id, and what tells its row from another process's. */
export interface ExecutorIdentity {
  id: string;
  hostname: string;
  pid: number;
}

export class ExecutorIdInUseError extends Error {
  constructor(row: ExecutorRow, ageSeconds: number, deadAfterSeconds: number) {
    super(`EXECUTOR_ID ${row.id} is held by a live process (pid ${row.pid} on ${row.hostname}, last heartbeat ${ageSeconds} s ago): `
      + `give this process another EXECUTOR_ID, leave it unset to get a free one, or stop that process `
      + `(its identity is released when it stops, or ${Math.max(0, deadAfterSeconds - ageSeconds)} s after its last heartbeat)`);
    this.name = 'ExecutorIdInUseError';
  }
}

/**
 * Claims this process's executor id before the engine launches (which then recovers the workflows left pending
 * under it). A requested id held by a live process is refused (ExecutorIdInUseError). Without one, the process
 * takes `<host>-<n>` with the lowest n that no live process holds, so a restarted process gets its id back and
 * two processes on one host never share one. Claims are serialised by an advisory lock.
 */
export async function claimExecutorId(db: Db, requested: string | undefined, role: string, deadAfterSeconds: number): Promise<ExecutorIdentity> {
  const hostname = os.hostname();
  const me = { hostname, pid: process.pid };
  return db.transaction().execute(async (transaction) => {
    await sql`select pg_advisory_xact_lock(hashtextextended('agentgate:executor-claim', 0))`.execute(transaction);
    const { rows } = await sql<ExecutorRow & { age_seconds: number }>`
      select *, extract(epoch from now() - heartbeat_at)::int as age_seconds from executors
      where ${requested === undefined ? sql`hostname = ${hostname}` : sql`id = ${requested}`}`.execute(transaction);
    const held = new Map(rows.filter((row) => isHeldByLiveProcess(row, row.age_seconds, deadAfterSeconds)).map((row) => [row.id, row]));
    let id = requested;
    if (id !== undefined && held.has(id)) throw new ExecutorIdInUseError(held.get(id)!, held.get(id)!.age_seconds, deadAfterSeconds);
    for (let slot = 1; id === undefined; slot++) if (!held.has(defaultId(hostname, slot))) id = defaultId(hostname, slot);
    await transaction.insertInto('executors')
      .values({ id, ...me, role })
      .onConflict((conflict) => conflict.column('id').doUpdateSet({
        ...me, role, started_at: sql`now()` as never, heartbeat_at: sql`now()` as never,
        stopped_at: null, recovered_by: null, recovered_at: null, recovered_workflows: 0,
      }))
      .execute();
    return { id, ...me };
  });
}

/**
 * A row is held while its process has neither stopped nor been taken over and its heartbeat is recent. A row of
 * this host whose process is gone (a kill -9 and a restart) is free at once: a pid cannot be two processes.
 */
function isHeldByLiveProcess(row: ExecutorRow, ageSeconds: number, deadAfterSeconds: number): boolean {
  if (row.stopped_at !== null || row.recovered_at !== null || ageSeconds >= deadAfterSeconds) return false;
  if (row.hostname !== os.hostname()) return true;
  return row.pid !== process.pid && isProcessAlive(row.pid);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const defaultId = (hostname: string, slot: number) => `${hostname.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 56)}-${slot}`;

/**
 * Renews this process's lease. False when its row is no longer its own: another worker found it dead and took
 * over its workflows, or another process claimed the id. The caller must then stop running anything.
 */
export async function renewLease(db: Db, identity: ExecutorIdentity): Promise<boolean> {
  const renewed = await db.updateTable('executors').set({ heartbeat_at: sql`now()` as never })
    .where('id', '=', identity.id).where('hostname', '=', identity.hostname).where('pid', '=', identity.pid)
    .where('recovered_at', 'is', null).where('stopped_at', 'is', null)
    .returning('id').executeTakeFirst();
  return renewed !== undefined;
}

/** A clean shutdown releases the identity at once (its workflows were handed back first). */
export async function markStopped(db: Db, identity: ExecutorIdentity): Promise<void> {
  await db.updateTable('executors').set({ stopped_at: sql`now()` as never })
    .where('id', '=', identity.id).where('pid', '=', identity.pid).execute();
}

/**
 * Executors that have pending workflows of this application but no live process: their lease lapsed, they
 * stopped, or they never registered (an id from before executors were recorded).
 */
export async function findDeadExecutorsWithWork(db: Db, deadAfterSeconds: number): Promise<string[]> {
  const { rows } = await sql<{ executor_id: string }>`
    select distinct w.executor_id from dbos.workflow_status w
    where w.status = 'PENDING' and w.application_version = ${APPLICATION_VERSION} and w.executor_id is not null
      and not exists (
        select 1 from executors e where e.id = w.executor_id and e.stopped_at is null and e.recovered_at is null
          and e.heartbeat_at > now() - make_interval(secs => ${deadAfterSeconds}))`.execute(db);
  return rows.map((row) => row.executor_id);
}

/**
 * Takes an executor over for `by` if it is still dead now: its row is fenced (its next heartbeat fails and it exits)
 * before its work is handed on. One statement that re-reads the row, so an executor that renewed its lease since it
 * was found dead is left alone, and a judge that lost its own lease cannot fence anyone (it renews before judging).
 * True for an executor with no live row at all (never registered, stopped, or already taken over): only its
 * leftover work is handed on.
 */
export async function takeOverIfDead(db: Db, executorId: string, by: string, deadAfterSeconds: number): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with fenced as (
      update executors set recovered_at = now(), recovered_by = ${by}
      where id = ${executorId} and stopped_at is null and recovered_at is null
        and heartbeat_at <= now() - make_interval(secs => ${deadAfterSeconds})
      returning id)
    select id from fenced
    union all
    select ${executorId} where not exists (select 1 from executors where id = ${executorId} and stopped_at is null and recovered_at is null)`
    .execute(db);
  return rows.length > 0;
}

export async function countRecovered(db: Db, executorId: string, count: number): Promise<void> {
  await db.updateTable('executors').set({ recovered_workflows: sql`recovered_workflows + ${count}` as never }).where('id', '=', executorId).execute();
}

/**
 * Puts an executor's pending task workflows back on the task queue, in their tenant's partition, for any worker
 * to take; returns their ids. The engine's own recovery does the same but sends workflows started directly (not
 * from a queue) to its process-private internal queue, which every process dispatches, gateway-only ones too,
 * outside any tenant's partition. One statement: a workflow another worker has since taken (it is no longer
 * PENDING under this executor) is left alone, so each is handed on once however many workers try. Returns the
 * workflows with the number of times they have been started so far. `onlyIds` limits it to those workflows.
 */
export async function requeueExecutorWorkflows(db: Db, executorId: string, onlyIds?: string[]): Promise<Array<{ workflowId: string; attempts: number }>> {
  const { rows } = await sql<{ workflow_uuid: string; recovery_attempts: string }>`
    update dbos.workflow_status w set
      status = 'ENQUEUED', owner_xid = null, started_at_epoch_ms = null,
      updated_at = (extract(epoch from now()) * 1000)::bigint,
      queue_name = case when w.queue_name is null or w.queue_name = ${INTERNAL_QUEUE} then ${TASK_QUEUE} else w.queue_name end,
      queue_partition_key = coalesce(w.queue_partition_key, t.tenant_id::text)
    from tasks t
    where t.id::text = w.workflow_uuid and w.status = 'PENDING' and w.executor_id = ${executorId}
      and w.application_version = ${APPLICATION_VERSION}
      and ${onlyIds === undefined ? sql`true` : sql`w.workflow_uuid = any(${onlyIds})`}
    returning w.workflow_uuid, w.recovery_attempts`.execute(db);
  return rows.map((row) => ({ workflowId: row.workflow_uuid, attempts: Number(row.recovery_attempts) }));
}

/**
 * Puts an executor's pending background workflows (webhook deliveries) back on their queue for any worker, as
 * requeueExecutorWorkflows does for tasks; returns how many. `onlyIds` limits it to those workflows.
 */
export async function requeueExecutorBackgroundWorkflows(db: Db, executorId: string, onlyIds?: string[]): Promise<number> {
  const { rows } = await sql<{ workflow_uuid: string }>`
    update dbos.workflow_status w set
      status = 'ENQUEUED', owner_xid = null, started_at_epoch_ms = null,
      updated_at = (extract(epoch from now()) * 1000)::bigint
    where w.status = 'PENDING' and w.executor_id = ${executorId} and w.queue_name = ${BACKGROUND_QUEUE}
      and w.application_version = ${APPLICATION_VERSION}
      and ${onlyIds === undefined ? sql`true` : sql`w.workflow_uuid = any(${onlyIds})`}
    returning w.workflow_uuid`.execute(db);
  return rows.length;
}

/** Identities released (stopped) or taken over this long ago are forgotten: a host that is gone never comes back. */
const RETIRED_EXECUTOR_DAYS = 7;

export async function purgeRetiredExecutors(db: Db): Promise<void> {
  await db.deleteFrom('executors')
    .where((eb) => eb.or([
      eb('stopped_at', '<', sql<Date>`now() - make_interval(days => ${RETIRED_EXECUTOR_DAYS})`),
      eb('recovered_at', '<', sql<Date>`now() - make_interval(days => ${RETIRED_EXECUTOR_DAYS})`),
    ]))
    .execute();
}

export interface ExecutorStates { alive: number; dead: number; stopped: number }

/** Identities by state: held by a live process, dead (lease lapsed or taken over), or released by a clean stop. */
export async function countExecutorStates(db: Db, deadAfterSeconds: number): Promise<ExecutorStates> {
  const { rows: [row] } = await sql<ExecutorStates>`
    select
      count(*) filter (where stopped_at is null and recovered_at is null and heartbeat_at > now() - make_interval(secs => ${deadAfterSeconds}))::int as alive,
      count(*) filter (where stopped_at is null and (recovered_at is not null or heartbeat_at <= now() - make_interval(secs => ${deadAfterSeconds})))::int as dead,
      count(*) filter (where stopped_at is not null)::int as stopped
    from executors`.execute(db);
  return row;
}
