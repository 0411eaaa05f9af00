import { Type } from 'typebox';
import { TaskEventRecord } from '../events/event-record.ts';
import { SESSION_ID_PATTERN } from '../id-formats.ts';

const Nullable = <T extends ReturnType<typeof Type.String | typeof Type.Integer>>(schema: T) => Type.Union([schema, Type.Null()]);

export const SessionIdParams = Type.Object({
  sessionId: Type.String({ pattern: SESSION_ID_PATTERN, description: 'the session UUID or its custom id' }),
});

const Page = (defaultLimit: number) => ({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
});

export const ListSessionsQuery = Type.Object(Page(20));

const TaskStatusShort = Type.Enum(['QUEUED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

/** Session detail (spec 2.9) with the summary's computed fields: one shape for the list and the detail. */
export const SessionView = Type.Object({
  session_id: Type.String({ format: 'uuid' }),
  external_id: Nullable(Type.String({ description: 'the custom id the session was created with' })),
  user_id: Type.String({ format: 'uuid' }),
  title: Type.String({ maxLength: 60, description: 'the stored title, else one made from the first query' }),
  context: Type.Record(Type.String(), Type.Unknown(), { description: 'title, external_id and the feature flags of the first task' }),
  token_budget: Type.Integer(),
  tokens_used: Type.Integer(),
  task_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  expires_at: Nullable(Type.String()),
  last_activity_at: Type.String(),
  latest_task_query: Nullable(Type.String()),
  latest_task_status: Type.Union([TaskStatusShort, Type.Null()]),
  first_task_mode: Nullable(Type.String()),
  successful_tasks: Type.Integer({ description: 'COMPLETED tasks' }),
  failed_tasks: Type.Integer({ description: 'FAILED and TIMEOUT tasks (cancelled ones are neither)' }),
  total_cost_usd: Type.Number(),
  cost_usd: Type.Number({ description: 'the same as total_cost_usd: the name Shannon\'s Python SDK reads for a session\'s cost' }),
  average_cost_per_task: Type.Number(),
  success_rate: Type.Number({ minimum: 0, maximum: 1 }),
  budget_utilization: Type.Number(),
  budget_remaining: Type.Integer({ minimum: 0 }),
  is_near_budget_limit: Type.Boolean(),
  is_active: Type.Boolean({ description: 'activity in the last 24 hours' }),
  is_research_session: Type.Boolean(),
  research_strategy: Nullable(Type.String({ description: 'the session\'s research strategy (its context\'s, else its first task\'s), null for none' })),
});

export const ListSessionsResponse = Type.Object({ sessions: Type.Array(SessionView), total_count: Type.Integer() });

/** Task history item (spec 2.8). */
export const HistoryItem = Type.Object({
  task_id: Type.String({ format: 'uuid' }),
  workflow_id: Type.String(),
  query: Type.String(),
  status: TaskStatusShort,
  started_at: Type.String({ description: 'when it started running, else when it was submitted' }),
  completed_at: Nullable(Type.String()),
  duration_ms: Nullable(Type.Integer()),
  error_message: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  mode: Nullable(Type.String()),
  result: Nullable(Type.String()),
  agents_used: Type.Integer(),
  tools_invoked: Type.Integer(),
  total_tokens: Type.Integer(),
  total_cost_usd: Type.Number(),
});

export const SessionHistoryQuery = Type.Object(Page(20));

/** Where the next page starts: a page ends early when its texts reach the size budget (text-budget.ts). */
const PageEnd = {
  has_more: Type.Boolean(),
  next_offset: Nullable(Type.Integer({ description: 'offset + tasks on this page; null on the last page' })),
};

export const SessionHistoryResponse = Type.Object({
  session_id: Type.String({ format: 'uuid' }),
  tasks: Type.Array(HistoryItem),
  total: Type.Integer({ description: 'tasks in the session' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  ...PageEnd,
});

export const SessionEventsQuery = Type.Object(Page(10));

export const Turn = Type.Object({
  turn: Type.Integer({ description: 'offset + position, from 1' }),
  task_id: Type.String({ format: 'uuid' }),
  user_query: Type.String(),
  final_output: Type.String({ description: 'the task result, else its first LLM_OUTPUT event' }),
  timestamp: Type.String(),
  events: Type.Array(TaskEventRecord, { description: 'the task events, LLM_PARTIAL excluded' }),
  metadata: Type.Object({
    tokens_used: Type.Integer(),
    execution_time_ms: Type.Integer(),
    agents_involved: Type.Array(Type.String()),
  }),
});

export const SessionEventsResponse = Type.Object({
  session_id: Type.String({ format: 'uuid' }),
  count: Type.Integer({ description: 'turns in the session' }),
  turns: Type.Array(Turn),
  ...PageEnd,
});

export const RenameSessionBody = Type.Object({ title: Type.String({ maxLength: 4096 }) });

export const RenameSessionResponse = Type.Object({ session_id: Type.String({ format: 'uuid' }), title: Type.String() });

export const SessionBudgetBody = Type.Object({ token_budget: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }) });

export const SessionBudgetResponse = Type.Object({ session_id: Type.String(), token_budget: Type.Integer(), tokens_used: Type.Integer() });
