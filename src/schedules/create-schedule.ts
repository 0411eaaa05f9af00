import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { forbidden } from '../errors.ts';
import { insertScheduleWithinLimit, runsAsKey } from './queries.ts';
import { checkScheduleFields, DEFAULT_BUDGET_PER_RUN_USD, DEFAULT_TIMEOUT_SECONDS, DEFAULT_TIMEZONE } from './schedule-fields.ts';
import type { CreateScheduleInput } from './schemas.ts';

/** POST /api/v1/schedules: checks the schedule, and stores it ACTIVE with its first run's time. */
export async function createSchedule(deps: Deps, caller: Caller, input: CreateScheduleInput, requestedId?: string) {
  const { fields, cron } = await checkScheduleFields(deps, caller, {
    name: input.name,
    description: input.description ?? '',
    cron_expression: input.cron_expression,
    timezone: input.timezone ?? DEFAULT_TIMEZONE,
    task_query: input.task_query,
    task_context: input.task_context ?? {},
    max_budget_per_run_usd: input.max_budget_per_run_usd ?? DEFAULT_BUDGET_PER_RUN_USD,
    timeout_seconds: input.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
  });
  const id = requestedId ?? randomUUID();
  const nextRunAt = cron.nextRun(new Date());
  const limit = deps.config.schedules.maxPerUser;
  const stored = await insertScheduleWithinLimit(deps.db, {
    ...fields, id, tenant_id: caller.tenantId, user_id: caller.userId, api_key_id: runsAsKey(caller), status: 'ACTIVE', next_run_at: nextRunAt,
  }, limit);
  if (!stored) throw forbidden(`Schedule limit reached: at most ${limit} schedules per user (SCHEDULE_MAX_PER_USER)`);
  return { schedule_id: id, message: 'Schedule created successfully', next_run_at: nextRunAt?.toISOString() ?? null };
}
