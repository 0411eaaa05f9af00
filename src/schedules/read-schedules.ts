import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { findOwnedSchedule, listOwnedSchedules, listScheduleRuns } from './queries.ts';
import { scheduleRunView, scheduleView } from './schedule-view.ts';
import type { ScheduleStatus } from '../db/schema.ts';

export async function listSchedules(deps: Deps, caller: Caller, query: { page: number; page_size: number; status?: ScheduleStatus }) {
  const { rows, total } = await listOwnedSchedules(deps.db, caller, { page: query.page, pageSize: query.page_size, status: query.status });
  // A list item is the whole record (spec 2.10): Shannon's SDK reads created_at and task_query of each.
  return { schedules: rows.map(scheduleView), total, total_count: total, page: query.page, page_size: query.page_size };
}

export async function getSchedule(deps: Deps, caller: Caller, id: string) {
  return scheduleView(await findOwnedSchedule(deps.db, caller, id));
}

export async function listRuns(deps: Deps, caller: Caller, id: string, query: { page: number; page_size: number }) {
  const schedule = await findOwnedSchedule(deps.db, caller, id);
  const { rows, total } = await listScheduleRuns(deps.db, schedule, query.page, query.page_size);
  return { runs: rows.map(scheduleRunView), total_count: total, page: query.page, page_size: query.page_size };
}
