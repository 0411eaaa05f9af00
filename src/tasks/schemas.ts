import { Type, type Static } from 'typebox';
import { SESSION_ID_PATTERN } from '../id-formats.ts';
import { TaskEventRecord } from '../events/event-record.ts';
import { HISTORY_PRESETS } from '../workflows/memory/history-settings.ts';


const MockToolCall = Type.Object({ tool: Type.String({ minLength: 1, maxLength: 100 }), args: Type.Optional(Type.Record(Type.String(), Type.Unknown())) });

/** Recognised context keys (spec 2.2) get their types checked; any other key is kept as given. */
export const TaskContext = Type.Object({
  role: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  system_prompt: Type.Optional(Type.String({ maxLength: 100_000 })),
  prompt_params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  model_tier: Type.Optional(Type.Enum(['small', 'medium', 'large'])),
  model_override: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  provider_override: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  research_strategy: Type.Optional(Type.Enum(['quick', 'standard', 'deep', 'academic'])),
  skill: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  template: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  template_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  template_version: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a semantic version, exactly as written in the template (e.g. 1.0.0)' })),
  disable_ai: Type.Optional(Type.Boolean()),
  history_window_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  use_case_preset: Type.Optional(Type.Enum(Object.keys(HISTORY_PRESETS))),
  primers_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  recents_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  compression_trigger_ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  compression_target_ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  force_research: Type.Optional(Type.Boolean()),
  iterative_research_enabled: Type.Optional(Type.Boolean()),
  iterative_max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
  enable_fact_extraction: Type.Optional(Type.Boolean()),
  // The reference reads these from context; the spec puts the first two at the top level, which wins when both are set.
  max_concurrent_agents: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
  enable_verification: Type.Optional(Type.Boolean()),
  enable_citations: Type.Optional(Type.Boolean()),
  force_swarm: Type.Optional(Type.Boolean()),
  agent: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  agent_input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  platforms: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  token_budget: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  mock_delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
  mock_answer_words: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  require_approval: Type.Optional(Type.Boolean()),
  /** Scripting of the mock provider (issue 14, scope 9): the plan it answers, its tool calls, agents that fail. */
  mock_plan: Type.Optional(Type.Object({}, { additionalProperties: true })),
  // One entry per model turn: a call, or several calls made in the same turn.
  mock_tool_calls: Type.Optional(Type.Array(Type.Union([MockToolCall, Type.Array(MockToolCall, { minItems: 1, maxItems: 20 })]), { maxItems: 50 })),
  mock_failures: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Integer({ minimum: 0, maximum: 10 }))),
}, { additionalProperties: true });

const ModelControls = {
  model_tier: Type.Optional(Type.Enum(['small', 'medium', 'large'])),
  model_override: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  provider_override: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  // Spec 2.2: force_swarm must be inside context; declared here so that a top-level one is refused by name, not ignored.
  force_swarm: Type.Optional(Type.Unknown({ description: 'not accepted here: send context.force_swarm' })),
};

export const SubmitTaskBody = Type.Object({
  query: Type.String({ maxLength: 200_000 }),
  session_id: Type.Optional(Type.String({ pattern: SESSION_ID_PATTERN })),
  context: Type.Optional(TaskContext),
  mode: Type.Optional(Type.Enum(['simple', 'standard', 'complex', 'supervisor'])),
  ...ModelControls,
  skill: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_\\-\\.]{1,100}(@[0-9A-Za-z\\.\\-\\+]{1,50})?$' })),
  research_strategy: Type.Optional(Type.Enum(['quick', 'standard', 'deep', 'academic'])),
  max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  max_concurrent_agents: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
  enable_verification: Type.Optional(Type.Boolean()),
  webhook_url: Type.Optional(Type.String({
    minLength: 1, maxLength: 2048,
    description: 'receives this task\'s events, signed per Standard Webhooks with the webhook_secret of the answer; it must pass the outbound network guard',
  })),
});
export type SubmitTaskInput = Static<typeof SubmitTaskBody>;

export const SubmitStreamBody = Type.Object({
  query: Type.String({ maxLength: 200_000 }),
  session_id: Type.Optional(Type.String({ pattern: SESSION_ID_PATTERN })),
  context: Type.Optional(TaskContext),
  ...ModelControls,
});

export const SubmitTaskResponse = Type.Object({
  task_id: Type.String(),
  status: Type.String(),
  message: Type.String(),
  created_at: Type.String(),
  webhook_id: Type.Optional(Type.String({ description: 'with webhook_url: the task\'s webhook subscription' })),
  webhook_secret: Type.Optional(Type.String({ description: 'with webhook_url: the whsec_… secret its deliveries are signed with' })),
});

export const SubmitStreamResponse = Type.Object({
  workflow_id: Type.String(),
  task_id: Type.String(),
  stream_url: Type.String(),
});

export const TaskIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

const Usage = Type.Object({
  total_tokens: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cached_input_tokens: Type.Optional(Type.Integer()),
  cache_write_tokens: Type.Optional(Type.Integer()),
  estimated_cost: Type.Number(),
});

const UnifiedResponse = Type.Object({
  task_id: Type.String(),
  session_id: Type.String(),
  status: Type.String(),
  result: Type.String(),
  metadata: Type.Object({
    model: Type.Union([Type.String(), Type.Null()]),
    execution_mode: Type.Union([Type.String(), Type.Null()]),
    complexity_score: Type.Union([Type.Number(), Type.Null()]),
    agents_used: Type.Integer(),
    // A research task's (spec 2.6).
    research_strategy: Type.Optional(Type.String()),
    iterations: Type.Optional(Type.Integer()),
    agent_count: Type.Optional(Type.Integer()),
    citations: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
    verification: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    extracted_facts: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
    fact_summary: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    // A failed research task's (issue 27 Scope 7).
    failed_phase: Type.Optional(Type.String()),
    partial_findings: Type.Optional(Type.Array(Type.Object({ agent_id: Type.String(), answer: Type.String() }))),
  }),
  usage: Type.Object({
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    cost_usd: Type.Number(),
  }),
  performance: Type.Object({ execution_time_ms: Type.Union([Type.Integer(), Type.Null()]) }),
  stop_reason: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  timestamp: Type.String(),
});

export const TaskView = Type.Object({
  task_id: Type.String(),
  workflow_id: Type.String(),
  status: Type.String(),
  result: Type.String(),
  response: Type.Optional(Type.Unknown()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  error: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  query: Type.String(),
  session_id: Type.String(),
  context: Type.Record(Type.String(), Type.Unknown()),
  unified_response: UnifiedResponse,
  mode: Type.Union([Type.String(), Type.Null()]),
  model_used: Type.String(),
  provider: Type.String(),
  usage: Usage,
});
export type TaskViewBody = Static<typeof TaskView>;

export const ListTasksQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  status: Type.Optional(Type.String({ maxLength: 40 })),
  session_id: Type.Optional(Type.String({ pattern: SESSION_ID_PATTERN })),
});

export const TaskSummary = Type.Object({
  task_id: Type.String(),
  query: Type.String(),
  status: Type.String(),
  mode: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  total_token_usage: Type.Union([Type.Object({
    total_tokens: Type.Integer(),
    prompt_tokens: Type.Integer(),
    completion_tokens: Type.Integer(),
    cost_usd: Type.Number(),
  }), Type.Null()]),
});

export const ListTasksResponse = Type.Object({ tasks: Type.Array(TaskSummary), total_count: Type.Integer() });


export const EventHistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  after_seq: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  include_partial: Type.Boolean({ default: false }),
});

export const EventHistoryResponse = Type.Object({
  workflow_id: Type.String(),
  events: Type.Array(TaskEventRecord),
  count: Type.Integer(),
  total_count: Type.Integer(),
  has_more: Type.Boolean(),
  next_after_seq: Type.Union([Type.Integer(), Type.Null()]),
});

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);

export const TimelineStep = Type.Object({
  index: Type.Integer({ description: 'position of the step in the workflow (the engine function id)' }),
  name: Type.String(),
  kind: Type.Enum(['step', 'wait', 'child_workflow'], { description: 'wait = a durable wait on a signal or timer' }),
  phase: Type.String({ description: 'setup, execution or completion' }),
  status: Type.Enum(['completed', 'failed', 'running']),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  duration_ms: NullableInteger,
  retries: Type.Integer({ description: 'model fallbacks taken inside the step' }),
  error: Nullable(Type.String()),
});

export const TimelineResponse = Type.Object({
  workflow_id: Type.String(),
  status: Type.String(),
  engine_status: Nullable(Type.String()),
  recovery_attempts: Type.Integer({ description: 'times the workflow was resumed after a crash' }),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  duration_ms: NullableInteger,
  phases: Type.Array(Type.Object({
    name: Type.String(),
    started_at: Nullable(Type.String()),
    completed_at: Nullable(Type.String()),
    duration_ms: NullableInteger,
    steps: Type.Array(Type.Integer()),
  })),
  steps: Type.Array(TimelineStep),
});

export const ControlBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) });

export const ControlResponse = Type.Object({ success: Type.Boolean(), message: Type.String(), task_id: Type.String() });

export const CancelResponse = Type.Object({ success: Type.Boolean(), message: Type.String(), status: Type.String() });

export const ControlStateResponse = Type.Object({
  is_paused: Type.Boolean(),
  is_cancelled: Type.Boolean(),
  paused_at: Type.String({ description: 'empty when never paused' }),
  pause_reason: Type.String(),
  paused_by: Type.String(),
  cancel_reason: Type.String(),
  cancelled_by: Type.String(),
});

export const BudgetBody = Type.Object({ token_budget: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }) });

export const BudgetResponse = Type.Object({
  task_id: Type.String(),
  token_budget: Type.Integer(),
  tokens_used: Type.Integer(),
  session_id: Type.String(),
  session_token_budget: Type.Integer(),
  session_tokens_used: Type.Integer(),
});
