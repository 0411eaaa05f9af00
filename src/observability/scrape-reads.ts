import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { UNROUTED_MODE } from './metrics.ts';

/**
 * The database reads of a scrape. Each is bounded by an index or a small table: unfinished tasks (the partial
 * indexes `tasks_unfinished` and `tasks_parked`), open waits (`task_waits` holds only those), waiting workflows (the
 * engine's `idx_workflow_status_in_flight`) and workflows dequeued since the last scrape (`idx_workflow_status_started_at`).
 */

export interface TaskCount { status: string; mode: string; count: number }

/**
 * Unfinished tasks by status and mode. A paused task counts once its workflow has stopped at its checkpoint
 * (it parks); an index on `status` alone would be needed to count the moment between, and a seq scan of every
 * task ever run is no price for a scrape.
 */
export async function countUnfinishedTasks(db: Db): Promise<TaskCount[]> {
  const { rows } = await sql<TaskCount>`
    select status, coalesce(mode, ${UNROUTED_MODE}) as mode, count(*)::int as count
    from tasks
    where (status in ('QUEUED', 'RUNNING') or parked_at_step is not null) and status in ('QUEUED', 'RUNNING', 'PAUSED')
    group by 1, 2`.execute(db);
  return rows;
}

export interface WaitCount { wait: string; count: number }

/**
 * Open waits by kind: the signal's name up to its first `:` (`approval:<id>` is an approval). The table holds only
 * open waits, and a task's close when it ends, so it is read whole.
 */
export async function countOpenWaits(db: Db): Promise<WaitCount[]> {
  const { rows } = await sql<WaitCount>`
    select split_part(signal, ':', 1) as wait, count(*)::int as count from task_waits group by 1`.execute(db);
  return rows;
}

export interface QueueBacklog { queue: string; depth: number; oldestWaitMs: number }

/** Workflows waiting in each engine queue, and how long the oldest has waited (database clock). */
export async function readQueueBacklogs(db: Db): Promise<QueueBacklog[]> {
  const { rows } = await sql<QueueBacklog>`
    select queue_name as queue, count(*)::int as depth,
      greatest(0, (extract(epoch from now()) * 1000)::bigint - min(created_at)) as "oldestWaitMs"
    from dbos.workflow_status
    where status = 'ENQUEUED' and queue_name is not null
    group by queue_name`.execute(db);
  return rows;
}

/** Where the last read of dequeued workflows stopped: their dequeue time, then id, orders them. */
export interface DequeueCursor { startedAtMs: number; workflowId: string }

export interface DequeuedWorkflow extends DequeueCursor { queue: string; waitMs: number }

/**
 * Workflows this executor took from a queue after the cursor, for their first run: a workflow that had
 * finished steps before this dequeue was recovered after a crash or rewound after a pause, and its creation
 * time says nothing about its wait in the queue.
 */
export async function readDequeuedWorkflows(db: Db, executorId: string, after: DequeueCursor, limit: number): Promise<DequeuedWorkflow[]> {
  const { rows } = await sql<DequeuedWorkflow>`
    select w.queue_name as queue, w.workflow_uuid as "workflowId", w.started_at_epoch_ms as "startedAtMs",
      greatest(0, w.started_at_epoch_ms - w.created_at) as "waitMs"
    from dbos.workflow_status w
    where w.started_at_epoch_ms >= ${after.startedAtMs}
      and (w.started_at_epoch_ms, w.workflow_uuid) > (${after.startedAtMs}::bigint, ${after.workflowId})
      and w.executor_id = ${executorId} and w.queue_name is not null
      and not exists (
        select 1 from dbos.operation_outputs o
        where o.workflow_uuid = w.workflow_uuid and o.completed_at_epoch_ms < w.started_at_epoch_ms)
    order by w.started_at_epoch_ms, w.workflow_uuid
    limit ${limit}`.execute(db);
  return rows;
}
