import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { findOwnedSchedule, runsAsKey, updateOwnedSchedule } from './queries.ts';
import { checkScheduleFields } from './schedule-fields.ts';
import { scheduleView } from './schedule-view.ts';
import type { UpdateScheduleInput } from './schemas.ts';

/**
 * PUT /api/v1/schedules/{id}: any subset of the fields; the schedule as changed is checked as a whole, and a
 * new expression or time zone moves an active schedule's next run to the first one from now.
 */
export async function updateSchedule(deps: Deps, caller: Caller, id: string, input: UpdateScheduleInput) {
  if (input.clear_task_context && input.task_context !== undefined) throw badRequest('send task_context or clear_task_context, not both');
  const current = await findOwnedSchedule(deps.db, caller, id);
  const { fields, cron } = await checkScheduleFields(deps, caller, {
    name: input.name ?? current.name,
    description: input.description ?? current.description,
    cron_expression: input.cron_expression ?? current.cron_expression,
    timezone: input.timezone ?? current.timezone,
    task_query: input.task_query ?? current.task_query,
    task_context: input.clear_task_context ? {} : input.task_context ?? current.task_context,
    max_budget_per_run_usd: input.max_budget_per_run_usd ?? Number(current.max_budget_per_run_usd),
    timeout_seconds: input.timeout_seconds ?? current.timeout_seconds,
  });
  const timesChanged = fields.cron_expression !== current.cron_expression || fields.timezone !== current.timezone;
  // A paused schedule has no next run, whatever happened since it was read.
  const nextRun = timesChanged ? { next_run_at: sql`case when status = 'ACTIVE' then ${cron.nextRun(new Date())}::timestamptz end` as never } : {};
  const row = await updateOwnedSchedule(deps.db, caller, id, { ...fields, ...nextRun, api_key_id: runsAsKey(caller) });
  if (!row) throw notFound('Schedule not found');
  return scheduleView(row);
}
