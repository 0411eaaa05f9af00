import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { toTaskEvent, type TaskEvent } from './append-event.ts';

export interface EventPageOptions {
  afterSeq: number;
  limit: number;
  offset?: number;
  types?: string[];
  includePartial?: boolean;
}

/** Events of a task after a cursor, in seq order. */
export async function readEventsAfter(db: Db, taskId: string, options: EventPageOptions): Promise<TaskEvent[]> {
  let query = db.selectFrom('task_events')
    .select(['task_id', 'seq', 'stream_id', 'type', 'agent_id', 'message', 'payload', 'created_at'])
    .where('task_id', '=', taskId)
    .where('seq', '>', options.afterSeq);
  if (options.types && options.types.length > 0) query = query.where('type', 'in', options.types);
  if (options.includePartial === false) query = query.where('type', '!=', 'LLM_PARTIAL');
  const rows = await query.orderBy('seq').limit(options.limit).offset(options.offset ?? 0).execute();
  return rows.map(toTaskEvent);
}

export async function countEventsAfter(db: Db, taskId: string, options: Omit<EventPageOptions, 'limit' | 'offset'>): Promise<number> {
  let query = db.selectFrom('task_events').select((eb) => eb.fn.countAll<number>().as('count'))
    .where('task_id', '=', taskId).where('seq', '>', options.afterSeq);
  if (options.includePartial === false) query = query.where('type', '!=', 'LLM_PARTIAL');
  return Number((await query.executeTakeFirstOrThrow()).count);
}

/**
 * The seq a `<ms>-<n>` stream id stands for: the last event at or before it. Stream ids increase with
 * seq, so this resumes exactly even if the id's own event was purged by retention.
 */
export async function seqAtStreamId(db: Db, taskId: string, ms: number, n: number): Promise<number> {
  const { rows } = await sql<{ seq: number }>`
    select seq from task_events
    where task_id = ${taskId}
      and (split_part(stream_id, '-', 1)::bigint, split_part(stream_id, '-', 2)::int) <= (${ms}::bigint, ${n}::int)
    order by seq desc limit 1`.execute(db);
  return rows[0]?.seq ?? 0;
}

/** `seq`, or the task's last seq when the log has not reached `seq` (0 for an empty log). */
export async function seqAtMost(db: Db, taskId: string, seq: number): Promise<number> {
  const { rows } = await sql<{ seq: number }>`
    select least(${seq}::int, coalesce(max(seq), 0)) as seq from task_events where task_id = ${taskId}`.execute(db);
  return rows[0].seq;
}
