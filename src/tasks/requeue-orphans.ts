import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { TASK_QUEUE } from '../engine/engine.ts';

/** A queued task older than this without progress may have lost its start to a crash. */
const ORPHAN_AGE_SECONDS = 30;
const BATCH = 500;

/**
 * The submit path writes the task row, then starts its workflow. A process that dies between the
 * two leaves a QUEUED row with no workflow; this sweep (at start-up and periodically) starts them.
 * Enqueueing an id that already has a workflow is a no-op, so the sweep is safe to repeat anywhere.
 */
export async function requeueOrphanedTasks(deps: Deps, minimumAgeSeconds = ORPHAN_AGE_SECONDS): Promise<number> {
  const { rows } = await sql<{ id: string; tenant_id: string }>`
    select id, tenant_id from tasks
    where status = 'QUEUED' and created_at < now() - make_interval(secs => ${minimumAgeSeconds})
      and not exists (select 1 from dbos.workflow_status w where w.workflow_uuid = tasks.id::text)
    order by created_at limit ${BATCH}`.execute(deps.db);
  for (const row of rows) await deps.engine.startTask(row.id, row.tenant_id);
  if (rows.length > 0) deps.logger.warn({ count: rows.length }, 'started tasks whose workflow was missing');
  return rows.length;
}

/**
 * Workflows enqueued before the task queue was partitioned by tenant have no partition key, and a
 * partitioned queue never dequeues those: at start-up they join their tenant's partition.
 */
export async function adoptUnpartitionedWorkflows(deps: Deps): Promise<void> {
  await sql`
    update dbos.workflow_status w set queue_partition_key = t.tenant_id::text
    from tasks t
    where w.workflow_uuid = t.id::text and w.queue_name = ${TASK_QUEUE} and w.status = 'ENQUEUED' and w.queue_partition_key is null`.execute(deps.db);
}
