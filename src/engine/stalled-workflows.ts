import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { APPLICATION_VERSION, isRunningHere } from './engine.ts';

/**
 * A workflow this process started or dequeued a moment ago is PENDING under it before its execution is registered
 * here; one left this long without any is no such moment.
 */
const STALLED_AFTER_SECONDS = 5;

/**
 * This process's own workflows that stopped running: PENDING under its executor, with no execution in this process
 * and no change for STALLED_AFTER_SECONDS. An execution ends so when the engine could not record a step (the
 * database refused the write, or went away at the wrong moment) and gave up without recording an outcome; the
 * dead-worker recovery never sees them, since their executor is alive.
 */
export async function findStalledWorkflows(db: Db, executorId: string): Promise<string[]> {
  const { rows } = await sql<{ workflow_uuid: string }>`
    select workflow_uuid from dbos.workflow_status
    where status = 'PENDING' and executor_id = ${executorId} and application_version = ${APPLICATION_VERSION}
      and updated_at < (extract(epoch from now() - make_interval(secs => ${STALLED_AFTER_SECONDS})) * 1000)::bigint`.execute(db);
  return rows.map((row) => row.workflow_uuid).filter((workflowId) => !isRunningHere(workflowId));
}
