import { sql } from 'kysely';
import type { Deps } from '../deps.ts';

/** A queued task older than this without progress may have lost its enqueue to a crash. */
const ORPHAN_AGE_SECONDS = 30;
const BATCH = 500;

/**
 * The submit path writes the task row, then enqueues its workflow. A process that dies between the
 * two leaves a QUEUED row with no workflow; this sweep (at start-up and periodically) enqueues them.
 * Enqueueing an id that already has a workflow is a no-op, so the sweep is safe to repeat anywhere.
 */
export async function requeueOrphanedTasks(deps: Deps, minimumAgeSeconds = ORPHAN_AGE_SECONDS): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    select id from tasks
    where status = 'QUEUED' and created_at < now() - make_interval(secs => ${minimumAgeSeconds})
      and not exists (select 1 from dbos.workflow_status w where w.workflow_uuid = tasks.id::text)
    order by created_at limit ${BATCH}`.execute(deps.db);
  for (const row of rows) await deps.engine.enqueueTask(row.id);
  if (rows.length > 0) deps.logger.warn({ count: rows.length }, 'enqueued tasks whose workflow was missing');
  return rows.length;
}
