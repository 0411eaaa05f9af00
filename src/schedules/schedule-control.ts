import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { conflict, notFound } from '../errors.ts';
import { markSchedulePaused } from '../task-state/schedule-pause.ts';
import { findOwnedSchedule, runsAsKey, updateOwnedSchedule } from './queries.ts';
import { compileExpression } from './schedule-fields.ts';

/** POST /api/v1/schedules/{id}/pause: no run starts until it resumes (spec 3.3); pausing a paused one is a 409. */
export async function pauseSchedule(deps: Deps, caller: Caller, id: string, reason: string | undefined) {
  const schedule = await findOwnedSchedule(deps.db, caller, id);
  const pausedAt = schedule.status === 'ACTIVE' ? await markSchedulePaused(deps.db, id, reason ?? null) : undefined;
  if (!pausedAt) throw conflict('Schedule already paused');
  return { message: 'Schedule paused', paused_at: pausedAt.toISOString() };
}

/**
 * POST /api/v1/schedules/{id}/resume: the next run is the first one from now; the runs it missed while paused
 * are not made up, and its runs act as the credential that resumed it. Resuming an active schedule changes nothing.
 */
export async function resumeSchedule(deps: Deps, caller: Caller, id: string, reason: string | undefined) {
  const schedule = await findOwnedSchedule(deps.db, caller, id);
  if (schedule.status === 'ACTIVE') return { message: 'Schedule is already active', next_run_at: schedule.next_run_at?.toISOString() ?? null };
  const nextRunAt = compileExpression(schedule.cron_expression, schedule.timezone).nextRun(new Date());
  const resumed = await updateOwnedSchedule(deps.db, caller, id, { status: 'ACTIVE', paused_at: null, pause_reason: null, next_run_at: nextRunAt, api_key_id: runsAsKey(caller) });
  if (!resumed) throw notFound('Schedule not found');
  deps.logger.info({ schedule_id: id, reason }, 'schedule resumed');
  return { message: 'Schedule resumed', next_run_at: nextRunAt?.toISOString() ?? null };
}

/** DELETE /api/v1/schedules/{id}: gone for its owner (runs already started finish; their tasks stay readable). */
export async function deleteSchedule(deps: Deps, caller: Caller, id: string) {
  const deleted = await updateOwnedSchedule(deps.db, caller, id, { deleted_at: sql`now()` as never, next_run_at: null });
  if (!deleted) throw notFound('Schedule not found');
  return { message: 'Schedule deleted successfully' };
}
