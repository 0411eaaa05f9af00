import { roundUsd } from '../llm/cost.ts';
import type { ScheduleRow } from '../db/schema.ts';
import type { ScheduleRunRow } from './queries.ts';
import type { ScheduleRunBody, ScheduleViewBody } from './schemas.ts';

const isoOrNull = (date: Date | null) => date?.toISOString() ?? null;

/** What identifies a schedule and its state. */
function scheduleSummary(row: ScheduleRow) {
  return {
    id: row.id,
    schedule_id: row.id,
    name: row.name,
    cron_expression: row.cron_expression,
    timezone: row.timezone,
    status: row.status,
    next_run_at: isoOrNull(row.next_run_at),
    total_runs: row.total_runs,
    successful_runs: row.successful_runs,
    failed_runs: row.failed_runs,
  };
}

/** The schedule record (spec 2.10). */
export function scheduleView(row: ScheduleRow): ScheduleViewBody {
  return {
    ...scheduleSummary(row),
    user_id: row.user_id,
    description: row.description,
    task_query: row.task_query,
    task_context: row.task_context,
    max_budget_per_run_usd: Number(row.max_budget_per_run_usd),
    timeout_seconds: row.timeout_seconds,
    paused_at: isoOrNull(row.paused_at),
    pause_reason: row.pause_reason,
    api_key_id: row.api_key_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    last_run_at: isoOrNull(row.last_run_at),
  };
}

/** A run record (spec 2.10): the optional fields only when they have a value. */
export function scheduleRunView(row: ScheduleRunRow): ScheduleRunBody {
  const optional = {
    result: row.result || undefined,
    error_message: row.error || row.skip_reason || undefined,
    model_used: row.model_used ?? undefined,
    provider: row.provider ?? undefined,
    duration_ms: row.started_at && row.completed_at ? row.completed_at.getTime() - row.started_at.getTime() : undefined,
    started_at: row.started_at?.toISOString(),
    completed_at: row.completed_at?.toISOString(),
  };
  return {
    workflow_id: row.task_id ?? '',
    query: row.query,
    status: row.task_id === null ? 'SKIPPED' : row.status!,
    total_tokens: Number(row.total_tokens),
    total_cost_usd: roundUsd(Number(row.cost_usd)),
    triggered_at: row.triggered_at.toISOString(),
    scheduled_for: row.scheduled_for.toISOString(),
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}
