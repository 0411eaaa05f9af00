import type { Cron } from 'croner';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest } from '../errors.ts';
import { prepareTask } from '../tasks/submit-task.ts';
import { compileCron, CronError, isTimezone, shortestGapMinutes } from './cron-times.ts';

export const DEFAULT_TIMEZONE = 'UTC';
export const DEFAULT_BUDGET_PER_RUN_USD = 10;
export const DEFAULT_TIMEOUT_SECONDS = 600;

/** Every field of a schedule, as stored (a new one with its defaults, or an existing one with the changes). */
export interface ScheduleFields {
  name: string;
  description: string;
  cron_expression: string;
  timezone: string;
  task_query: string;
  task_context: Record<string, unknown>;
  max_budget_per_run_usd: number;
  timeout_seconds: number;
}

/**
 * Checks a schedule's fields as a whole (spec 4.7, 7, 8) and returns them normalised (trimmed text, the time
 * and expression) with the compiled cron expression. The task it will run is checked as a submission
 * by its owner would be, policy included, so a schedule that could never run is refused now, not at 8:00.
 */
export async function checkScheduleFields(deps: Deps, caller: Caller, fields: ScheduleFields): Promise<{ fields: ScheduleFields; cron: Cron }> {
  const limits = deps.config.schedules;
  const name = fields.name.trim();
  if (name === '') throw badRequest('name is required');
  const timezone = fields.timezone.trim();
  if (!isTimezone(timezone)) throw badRequest(`Invalid timezone: ${JSON.stringify(fields.timezone)} is not an IANA time zone (e.g. Europe/Berlin, UTC)`);
  const cron = compileExpression(fields.cron_expression, timezone);
  const gap = shortestGapMinutes(cron, new Date());
  if (gap !== undefined && gap < limits.minIntervalMinutes) {
    throw badRequest(`Interval too short: runs ${gap} minutes apart; the minimum is ${limits.minIntervalMinutes} minutes (SCHEDULE_MIN_INTERVAL_MINS)`);
  }
  if (fields.max_budget_per_run_usd > limits.maxBudgetUsd) {
    throw badRequest(`max_budget_per_run_usd must be at most ${limits.maxBudgetUsd} (SCHEDULE_MAX_BUDGET_USD)`);
  }
  if (fields.timeout_seconds > deps.config.taskTimeoutSeconds) {
    throw badRequest(`timeout_seconds must be at most ${deps.config.taskTimeoutSeconds} (TASK_TIMEOUT_SECONDS)`);
  }
  if (fields.task_query.trim() === '') throw badRequest('task_query is required');
  await prepareTask(deps, caller, { query: fields.task_query, context: fields.task_context });
  return { fields: { ...fields, name, timezone, cron_expression: fields.cron_expression.trim().split(/\s+/).join(' '), task_query: fields.task_query.trim() }, cron };
}

/** The expression compiled for the zone; a 400 with the spec's message when it is not a valid one. */
export function compileExpression(expression: string, timezone: string): Cron {
  try {
    return compileCron(expression, timezone);
  } catch (error) {
    if (error instanceof CronError) throw badRequest(`Invalid cron expression: ${error.message}`);
    throw error;
  }
}
