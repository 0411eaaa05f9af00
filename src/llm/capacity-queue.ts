import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pLimit from 'p-limit';
import type { Db } from '../db/database.ts';

/** One limit a call counts against: a deployment's (its limit identity's) rpm or tpm, or a tenant's share of one. */
export type Limit = { key: string; limit: number; amount: number; tenant: boolean };

/**
 * A call that waits for a deployment's capacity: what a grant takes for it. `provider`: the catalogue's name of the
 * deployment the call is for, as the task's events name it.
 */
export type QueuedCall = { limitId: string; provider: string; tenantId?: string; limits: Limit[] };

/** Too long a wait for capacity: the caller's task is to park in the queue (workflows/runtime/capacity-wait.ts). */
export class CapacityWaitError extends Error {
  readonly queued: QueuedCall;

  constructor(queued: QueuedCall, reason: string) {
    super(`waiting for capacity of ${queued.limitId}: ${reason}`);
    this.name = 'CapacityWaitError';
    this.queued = queued;
  }
}

class Refused extends Error {
  readonly waitMs: number;

  constructor(waitMs: number) {
    super('no capacity');
    this.waitMs = waitMs;
  }
}

const refusalWait = (error: unknown): number => {
  if (error instanceof Refused) return Math.max(1, Math.ceil(error.waitMs));
  throw error;
};

/**
 * How far ahead a call may book its moment. A call that asked only once its moment had come would reach the
 * database a round trip after it, and an even pace never gets back the time lost (the providers benchmark reached
 * 81 % of the allowed rate that way); booked this much ahead, the caller waits out the rest and sends on time.
 */
export const BOOK_AHEAD_MS = 250;

/**
 * The share of a declared limit the pacing uses. Calls leave on their booked moments, but reach the provider up to a
 * few hundred ms later under load, unevenly; a provider that counts a sliding minute then finds one call too many in
 * some minute and refuses it (the 60 RPM acceptance run saw 61 once at the full pace). Paced at 98.5 %, a window of
 * `limit + 1` calls spans 1.5 % more than the provider's window (900 ms of a minute), more than that unevenness.
 */
export const PACE_SHARE = 0.985;

/** Tasks the grant loop wakes at once while it goes on granting. */
const WAKES_IN_FLIGHT = 3;

/**
 * Counts the call against every limit, or (throwing Refused, which rolls the caller's transaction back) against none,
 * and answers how long the caller is to wait before sending: the moment it booked. Each limit paces its calls evenly
 * (GCRA: a call of `amount` moves the key's next free moment on by amount × window / (limit × PACE_SHARE)), so no
 * stretch of one window ever holds more than the limit, whichever way a provider counts its windows; a moment may be booked up to
 * BOOK_AHEAD_MS before it comes. A tenant's share binds only while another tenant waits (`contended`); otherwise the
 * call passes it and its key is set one pace ahead, so a tenant that had the deployment to itself owes nothing once
 * another one comes. The database's clock is the one every process shares.
 */
async function takeAll(transaction: Db, limits: Limit[], windowMs: number, contended: boolean): Promise<number> {
  let waitMs = 0;
  for (const { key, limit, amount, tenant } of limits) {
    const costMs = paceMs({ limit, amount }, windowMs);
    const binds = !tenant || contended;
    const { rows } = await sql<{ wait_ms: number }>`
      with clock as (select extract(epoch from clock_timestamp()) * 1000 as now_ms)
      insert into provider_rate_windows as w (key, next_free_ms)
      select ${key}, now_ms + ${costMs}::float8 from clock
      on conflict (key) do update set next_free_ms = case when ${binds}::boolean
        then greatest(w.next_free_ms, excluded.next_free_ms - ${costMs}::float8) + ${costMs}::float8 else excluded.next_free_ms end
      where not ${binds}::boolean or w.next_free_ms <= (select now_ms from clock) + ${BOOK_AHEAD_MS}::float8
      returning greatest(0, w.next_free_ms - ${costMs}::float8 - (select now_ms from clock)) as wait_ms`.execute(transaction);
    if (rows.length === 0) throw new Refused(await waitOf(transaction, key));
    waitMs = Math.max(waitMs, Number(rows[0].wait_ms));
  }
  return waitMs;
}

/** How far one call moves a limit's next free moment on: its share of the window at the paced rate. */
function paceMs({ limit, amount }: Pick<Limit, 'limit' | 'amount'>, windowMs: number): number {
  return (amount * windowMs) / (limit * PACE_SHARE);
}

/** How long until the key's next moment can be booked. */
async function waitOf(transaction: Db, key: string): Promise<number> {
  const { rows: [row] } = await sql<{ wait_ms: number }>`
    select next_free_ms - extract(epoch from clock_timestamp()) * 1000 - ${BOOK_AHEAD_MS}::float8 as wait_ms from provider_rate_windows where key = ${key}`.execute(transaction);
  return Number(row?.wait_ms ?? 1);
}

/** `taken`: counted; the caller sends once `waitMs` have passed (the moment it booked). */
export type DirectTake = { kind: 'taken'; waitMs: number } | { kind: 'refused'; waitMs: number } | { kind: 'queued' };

/**
 * How late a caller waiting in place may be to ask again before its row stops counting (its process died, or it is
 * very late): it then binds no share and is owed no turn until it asks again.
 */
const OVERDUE_GRACE = sql`interval '2 seconds'`;

/** Rows of callers still waiting: parked ones, and callers in place that are not long overdue. */
const waitingRow = sql`granted_at is null and (parked or due_at > clock_timestamp() - ${OVERDUE_GRACE})`;

/**
 * A call taking capacity for itself: refused while parked callers of a task wait for the deployment (`queued`: a
 * task's call joins them, so a call never overtakes the queue), else counted against all its limits, the tenant's
 * share binding while any other tenant's caller waits (a caller of no tenant, a session title, is no other tenant).
 * It also gives way to callers of other tenants that waited in place before it (`seq`: its own row, if it has one)
 * and whose share has room: who asks first at a freed moment is a race, which a burst's callers, each asking as its
 * predecessor leaves, would keep winning.
 */
export async function takeDirect(db: Db, call: QueuedCall, windowMs: number, options: { mayPark: boolean; seq?: number }): Promise<DirectTake> {
  try {
    return await db.transaction().execute(async (transaction) => {
      const tenant = call.tenantId ?? '';
      const { rows: [state] } = await sql<{ contended: boolean | null; queued: boolean | null; gives_way: boolean | null }>`
        with clock as (select extract(epoch from clock_timestamp()) * 1000 as now_ms)
        select bool_or(q.tenant_id <> ${tenant}) as contended, bool_or(q.parked) as queued,
          bool_or(not q.parked and q.tenant_id <> ${tenant} and q.seq < ${options.seq ?? Number.MAX_SAFE_INTEGER}::bigint and not exists (
            select 1 from jsonb_array_elements(q.limits) as l join provider_rate_windows w on w.key = l->>'key'
            where (l->>'tenant')::boolean and w.next_free_ms > (select now_ms from clock) + ${BOOK_AHEAD_MS}::float8)) as gives_way
        from provider_capacity_queue q where q.limit_id = ${call.limitId} and ${waitingRow}`.execute(transaction);
      if (options.mayPark && state?.queued) return { kind: 'queued' } as const;
      if (state?.gives_way) return { kind: 'refused', waitMs: givingWayMs(call.limits, windowMs) } as const;
      return { kind: 'taken', waitMs: await takeAll(transaction, call.limits, windowMs, state?.contended ?? false) } as const;
    });
  } catch (error) {
    return { kind: 'refused', waitMs: refusalWait(error) };
  }
}

/** A caller giving way asks again after half of the deployment's pace: the caller it waits for takes one moment. */
function givingWayMs(limits: Limit[], windowMs: number): number {
  const deployment = limits.find(({ tenant }) => !tenant);
  return deployment === undefined ? 50 : Math.max(10, Math.ceil(paceMs(deployment, windowMs) / 2));
}

/**
 * A caller waiting in place shows it waits (a tenant's share binds for the others meanwhile) and when it will ask
 * again (`dueInMs`): its row's seq, kept from its first wait (`seq`) so that it keeps its turn.
 */
export async function holdPlace(db: Db, call: QueuedCall, seq: number | undefined, dueInMs: number): Promise<number> {
  const due = sql`clock_timestamp() + ${dueInMs} * interval '1 millisecond'`;
  if (seq !== undefined) {
    await sql`update provider_capacity_queue set due_at = ${due} where seq = ${seq}`.execute(db);
    return seq;
  }
  const { rows: [row] } = await sql<{ seq: string }>`
    insert into provider_capacity_queue (limit_id, tenant_id, limits, parked, due_at)
    values (${call.limitId}, ${call.tenantId ?? null}, ${JSON.stringify(call.limits)}::jsonb, false, ${due})
    returning seq`.execute(db);
  return Number(row.seq);
}

export async function leaveInPlace(db: Db, seq: number): Promise<void> {
  await sql`delete from provider_capacity_queue where seq = ${seq}`.execute(db);
}

/** Parks a task's call at the queue's end, in the caller's transaction; a call already queued keeps its place. */
export async function enqueueParked(transaction: Db, taskId: string, callKey: string, call: QueuedCall): Promise<void> {
  await sql`
    insert into provider_capacity_queue (limit_id, tenant_id, task_id, call_key, limits, parked)
    values (${call.limitId}, ${call.tenantId ?? null}, ${taskId}, ${callKey}, ${JSON.stringify(call.limits)}::jsonb, true)
    on conflict (call_key) do nothing`.execute(transaction);
}

/** Where a parked call stands: granted, still waiting, or no longer queued. */
export async function parkedCallState(db: Db, callKey: string): Promise<'granted' | 'waiting' | 'gone'> {
  const row = await sql<{ granted: boolean }>`select granted_at is not null as granted from provider_capacity_queue where call_key = ${callKey}`.execute(db);
  const [found] = row.rows;
  return found === undefined ? 'gone' : found.granted ? 'granted' : 'waiting';
}

/**
 * A woken call takes its grant (capacity already counted for it): how long until the moment booked for it, or
 * undefined when it held no grant for this limit identity. A call still waiting in the queue (woken for something
 * else: a resume) parks again in its place.
 */
export async function claimGrant(db: Db, callKey: string, call: QueuedCall): Promise<number | undefined> {
  const { rows: [row] } = await sql<{ limit_id: string; granted: boolean; wait_ms: number | null }>`
    select limit_id, granted_at is not null as granted, greatest(0, extract(epoch from granted_at - clock_timestamp()) * 1000) as wait_ms
    from provider_capacity_queue where call_key = ${callKey}`.execute(db);
  if (row === undefined) return undefined;
  if (!row.granted) throw new CapacityWaitError(call, 'still queued');
  await sql`delete from provider_capacity_queue where call_key = ${callKey}`.execute(db);
  return row.limit_id === call.limitId ? Number(row.wait_ms) : undefined;
}

type GrantOutcome = { kind: 'granted'; taskId: string } | { kind: 'wait'; waitMs: number } | { kind: 'empty' };

/**
 * Grants capacity to the next parked call of one limit identity, under a lock so that processes granting together
 * keep the order: the earliest call of each tenant, in arrival order, the first whose tenant's share has room (a
 * share binds while callers of more than one tenant wait). The capacity is counted for it now; the caller wakes it.
 */
async function grantNext(db: Db, limitId: string, windowMs: number): Promise<GrantOutcome> {
  try {
    return await db.transaction().execute(async (transaction) => {
      const { rows: [lock] } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtext(${`provider-capacity:${limitId}`})) as locked`.execute(transaction);
      if (!lock.locked) return { kind: 'wait', waitMs: 50 } as const;
      const { rows } = await sql<{ seq: string; tenant_id: string | null; task_id: string; limits: Limit[] }>`
        select seq, tenant_id, task_id, limits from provider_capacity_queue
        where limit_id = ${limitId} and parked and granted_at is null order by seq limit 500`.execute(transaction);
      if (rows.length === 0) return { kind: 'empty' } as const;
      const { rows: [tenants] } = await sql<{ count: number }>`
        select count(distinct tenant_id)::int as count from provider_capacity_queue where limit_id = ${limitId} and ${waitingRow}`.execute(transaction);
      const contended = tenants.count > 1;
      const heads = rows.filter((row, index) => rows.findIndex((other) => other.tenant_id === row.tenant_id) === index);
      let shortestWait = Number.POSITIVE_INFINITY;
      for (const head of heads) {
        const shareWait = contended ? await tenantWait(transaction, head.limits) : 0;
        if (shareWait > 0) {
          shortestWait = Math.min(shortestWait, shareWait);
          continue;
        }
        // granted_at is the moment booked for the call: its task, woken now, sends then (claimGrant).
        const waitMs = await takeAll(transaction, head.limits, windowMs, contended);
        await sql`update provider_capacity_queue set granted_at = clock_timestamp() + ${waitMs} * interval '1 millisecond' where seq = ${head.seq}`.execute(transaction);
        return { kind: 'granted', taskId: head.task_id } as const;
      }
      return { kind: 'wait', waitMs: shortestWait } as const;
    });
  } catch (error) {
    return { kind: 'wait', waitMs: refusalWait(error) };
  }
}

async function tenantWait(transaction: Db, limits: Limit[]): Promise<number> {
  const waits = await Promise.all(limits.filter(({ tenant }) => tenant).map(({ key }) => waitOf(transaction, key)));
  return Math.max(0, ...waits.map((wait) => Math.ceil(wait)));
}

/**
 * The grant loop: while parked calls wait for any deployment, grants each its capacity in turn as the deployment's
 * pacing frees it and wakes its task (`wake`, the `capacity` signal). Every process may run it (the start-up and
 * periodic sweep, and a park here); the lock per limit identity keeps the grants in order. Also cleans the queue:
 * rows of ended tasks, in-place rows of a process that died, and grants a woken task never claimed.
 */
export async function grantParkedCalls(db: Db, windowMs: number, staleAfterMs: number, wake: (taskId: string) => Promise<void>, stop?: AbortSignal): Promise<void> {
  await sweepQueue(db, staleAfterMs, wake);
  // Waking a task takes several round trips; awaited one by one they held the next grant back, and at a pace of
  // 100 ms the loop fell behind the moments it could book (86 % of the rate on a slower machine, 95 % now). They run
  // beside the loop instead, a few at a time (more woke tasks late, in clumps a provider counting fixed seconds
  // refuses); a wake that fails is retried by the sweep, and the loop reports it at its end.
  const wakes = pLimit(WAKES_IN_FLIGHT);
  const waking = new Set<Promise<void>>();
  let failedWake: { error: unknown } | undefined;
  while (!stop?.aborted) {
    const { rows } = await sql<{ limit_id: string }>`
      select distinct limit_id from provider_capacity_queue where parked and granted_at is null`.execute(db);
    if (rows.length === 0) break;
    let nextMs = 1_000;
    for (const { limit_id: limitId } of rows) {
      const outcome = await grantNext(db, limitId, windowMs);
      if (outcome.kind === 'granted') {
        const woken = wakes(() => wake(outcome.taskId)).catch((error: unknown) => { failedWake ??= { error }; })
          .finally(() => waking.delete(woken));
        waking.add(woken);
        nextMs = 0;
      } else if (outcome.kind === 'wait') {
        nextMs = Math.min(nextMs, outcome.waitMs);
      }
    }
    if (nextMs > 0) await sleep(nextMs, undefined, { signal: stop }).catch(() => undefined);
  }
  await Promise.all(waking);
  if (failedWake) throw failedWake.error;
}

async function sweepQueue(db: Db, staleAfterMs: number, wake: (taskId: string) => Promise<void>): Promise<void> {
  await sql`
    delete from provider_capacity_queue q using tasks t
    where t.id = q.task_id and (t.status in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT') or t.cancel_requested)`.execute(db);
  await sql`
    delete from provider_capacity_queue
    where (not parked and created_at < now() - ${staleAfterMs} * interval '1 millisecond') or granted_at < now() - interval '1 hour'`.execute(db);
  // A grant whose wake was lost (the process died between the two): woken again.
  const { rows } = await sql<{ task_id: string }>`
    select q.task_id from provider_capacity_queue q
    where q.parked and q.granted_at < now() - interval '2 seconds'
      and exists (select 1 from task_waits w where w.task_id = q.task_id and w.signal = 'capacity')`.execute(db);
  for (const { task_id: taskId } of rows) await wake(taskId);
}
