import { Type, type Static } from 'typebox';
import { TaskContext } from '../tasks/schemas.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * The fields of a schedule a client sets (spec 2.10, 4.7). Cron expression, time zone, budget cap, time limit
 * and non-blank text are checked by the service, which names the rule broken (schedule-fields.ts).
 */
const ScheduleFields = {
  name: Type.String({ maxLength: 255 }),
  description: Type.String({ maxLength: 10_000 }),
  cron_expression: Type.String({ maxLength: 200, description: 'five fields: minute hour day-of-month month day-of-week' }),
  timezone: Type.String({ maxLength: 100, description: 'IANA time zone, default UTC' }),
  task_query: Type.String({ maxLength: 200_000 }),
  task_context: TaskContext,
  max_budget_per_run_usd: Type.Number({ exclusiveMinimum: 0, description: 'USD a run may spend on model calls; default 10, at most SCHEDULE_MAX_BUDGET_USD' }),
  timeout_seconds: Type.Integer({ minimum: 1, description: 'a run is stopped after this; default 600, at most TASK_TIMEOUT_SECONDS' }),
};

// Unknown fields are refused: a misspelt field of a schedule would otherwise be ignored at every run for months.
export const CreateScheduleBody = Type.Object({
  name: ScheduleFields.name,
  cron_expression: ScheduleFields.cron_expression,
  task_query: ScheduleFields.task_query,
  description: Type.Optional(ScheduleFields.description),
  timezone: Type.Optional(ScheduleFields.timezone),
  task_context: Type.Optional(ScheduleFields.task_context),
  max_budget_per_run_usd: Type.Optional(ScheduleFields.max_budget_per_run_usd),
  timeout_seconds: Type.Optional(ScheduleFields.timeout_seconds),
}, { additionalProperties: false });
export type CreateScheduleInput = Static<typeof CreateScheduleBody>;

export const UpdateScheduleBody = Type.Object({
  name: Type.Optional(ScheduleFields.name),
  description: Type.Optional(ScheduleFields.description),
  cron_expression: Type.Optional(ScheduleFields.cron_expression),
  timezone: Type.Optional(ScheduleFields.timezone),
  task_query: Type.Optional(ScheduleFields.task_query),
  task_context: Type.Optional(ScheduleFields.task_context),
  max_budget_per_run_usd: Type.Optional(ScheduleFields.max_budget_per_run_usd),
  timeout_seconds: Type.Optional(ScheduleFields.timeout_seconds),
  clear_task_context: Type.Optional(Type.Boolean({ description: 'true empties task_context (the reference SDK sends it)' })),
}, { additionalProperties: false });
export type UpdateScheduleInput = Static<typeof UpdateScheduleBody>;

export const ScheduleIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const CreateScheduleResponse = Type.Object({
  schedule_id: Type.String(),
  message: Type.String(),
  next_run_at: Nullable(Type.String()),
});

const Counters = {
  total_runs: Type.Integer({ description: 'runs started' }),
  successful_runs: Type.Integer({ description: 'runs that completed' }),
  failed_runs: Type.Integer({ description: 'runs that failed, timed out or were cancelled' }),
};

export const ScheduleSummary = Type.Object({
  id: Type.String(),
  schedule_id: Type.String({ description: 'the same as id (the reference SDK reads either)' }),
  name: Type.String(),
  cron_expression: Type.String(),
  timezone: Type.String(),
  status: Type.Enum(['ACTIVE', 'PAUSED']),
  next_run_at: Nullable(Type.String({ description: 'null while paused' })),
  ...Counters,
});

/** Spec 2.10, with who owns it, what it runs as and why it is paused. */
export const ScheduleView = Type.Object({
  ...ScheduleSummary.properties,
  user_id: Type.String(),
  description: Type.String(),
  task_query: Type.String(),
  task_context: Type.Record(Type.String(), Type.Unknown()),
  max_budget_per_run_usd: Type.Number(),
  timeout_seconds: Type.Integer(),
  paused_at: Nullable(Type.String()),
  pause_reason: Nullable(Type.String()),
  api_key_id: Nullable(Type.String({
    description: 'the API key its runs act as (its scopes and rate limit): the one that created, last changed or resumed it; '
      + 'null when that was done signed in, and the runs act as the user. Revoking the key pauses the schedule.',
  })),
  created_at: Type.String(),
  updated_at: Type.String(),
  last_run_at: Nullable(Type.String({ description: 'when the latest run started' })),
});
export type ScheduleViewBody = Static<typeof ScheduleView>;

export const ListSchedulesQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  status: Type.Optional(Type.Enum(['ACTIVE', 'PAUSED'])),
});

export const ListSchedulesResponse = Type.Object({
  schedules: Type.Array(ScheduleView, { description: 'each the whole schedule record (spec 2.10)' }),
  total: Type.Integer(),
  total_count: Type.Integer({ description: 'the same as total (the reference SDK reads total_count)' }),
  page: Type.Integer(),
  page_size: Type.Integer(),
});

export const ListRunsQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});

/** Spec 2.10's run record; optional fields are left out when empty. A skipped occurrence has no task. */
export const ScheduleRun = Type.Object({
  workflow_id: Type.String({ description: 'the run\'s task id; empty for a skipped occurrence' }),
  query: Type.String(),
  status: Type.String({ description: 'the task\'s status (COMPLETED, FAILED, RUNNING, …), or SKIPPED' }),
  total_tokens: Type.Integer(),
  total_cost_usd: Type.Number(),
  triggered_at: Type.String(),
  scheduled_for: Type.String({ description: 'the occurrence of the cron expression this run is for' }),
  result: Type.Optional(Type.String()),
  error_message: Type.Optional(Type.String()),
  model_used: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  duration_ms: Type.Optional(Type.Integer()),
  started_at: Type.Optional(Type.String()),
  completed_at: Type.Optional(Type.String()),
});
export type ScheduleRunBody = Static<typeof ScheduleRun>;

export const ListRunsResponse = Type.Object({
  runs: Type.Array(ScheduleRun),
  total_count: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
});

export const ScheduleControlBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) });

export const PauseScheduleResponse = Type.Object({ message: Type.String(), paused_at: Type.String() });
export const ResumeScheduleResponse = Type.Object({ message: Type.String(), next_run_at: Nullable(Type.String()) });
export const DeleteScheduleResponse = Type.Object({ message: Type.String() });
