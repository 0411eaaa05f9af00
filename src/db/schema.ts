import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T = Record<string, unknown>> = ColumnType<T, T | string | undefined, T | string>;

export interface TenantsTable {
  id: string;
  name: string;
  slug: string;
  plan: Generated<string>;
  rate_limit_per_minute: number | null;
  created_at: Timestamp;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  email: string;
  name: string | null;
  role: Generated<'owner' | 'admin' | 'member'>;
  password_hash: string | null;
  is_active: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MembershipsTable {
  user_id: string;
  tenant_id: string;
  role: 'owner' | 'admin' | 'member';
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  tenant_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string[];
  rate_limit_per_minute: number | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface RefreshTokensTable {
  id: string;
  family_id: string;
  user_id: string;
  tenant_id: string;
  token_hash: string;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface AuditLogsTable {
  id: Generated<string>;
  event_type: string;
  user_id: string | null;
  tenant_id: string | null;
  ip: string | null;
  details: Json;
  created_at: Timestamp;
}

export interface StreamLeasesTable {
  id: string;
  credential_key: string;
  renewed_at: Generated<Timestamp>;
}

export interface RateLimitWindowsTable {
  key: string;
  window_start: number;
  count: number;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  external_id: string | null;
  title: string | null;
  /** While the generated title is pending: the task whose query it is generated from. */
  title_from_task: string | null;
  context: Json;
  token_budget: ColumnType<number, number, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp | null;
  deleted_at: Timestamp | null;
  deleted_by: string | null;
}

export type TaskStatus = 'QUEUED' | 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMEOUT';

export interface TasksTable {
  id: string;
  tenant_id: string;
  user_id: string;
  session_id: string;
  query: string;
  requested_mode: string | null;
  mode: string | null;
  context: Json;
  options: Json;
  status: TaskStatus;
  result: string | null;
  error: string | null;
  metadata: Json;
  complexity_score: number | null;
  agents_used: Generated<number>;
  model_used: string | null;
  provider: string | null;
  created_at: Timestamp;
  started_at: Timestamp | null;
  completed_at: Timestamp | null;
  updated_at: Timestamp;
  pause_requested: Generated<boolean>;
  paused_at: Timestamp | null;
  pause_reason: string | null;
  paused_by: string | null;
  /** The workflow step where a paused task's workflow ended to free its worker; null when not parked. */
  parked_at_step: number | null;
  cancel_requested: Generated<boolean>;
  cancel_reason: string | null;
  cancelled_by: string | null;
  token_budget: number | null;
  /** Set on a schedule's runs (migration 0019). */
  schedule_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The most the task's model calls may cost, in USD (a schedule's budget per run); null for no limit. */
  cost_budget_usd: ColumnType<string | null, number | string | null | undefined, number | string | null>;
  /** Time its agents waited for approvals asked for inside their tool loops (migration 0023); bigint, read as text. */
  approval_wait_ms: ColumnType<string, never, never>;
  /** When a step began to wait out a spent budget, until the resume (migration 0026). */
  in_step_paused_at: Timestamp | null;
  /** Time the task stayed paused while a step waited out a spent budget (migration 0026); bigint, read as text. */
  in_step_pause_ms: ColumnType<string, never, never>;
}

export interface UsageRecordsTable {
  id: Generated<string>;
  call_key: string;
  /** Null for the session's own calls (its title). */
  task_id: string | null;
  tenant_id: string;
  user_id: string;
  session_id: string;
  agent_id: string;
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Of input_tokens, those read from the provider's prompt cache (priced at the cached-input price). */
  cached_input_tokens: Generated<number>;
  /** Of input_tokens, those written to the provider's prompt cache (priced at the cache-write price). */
  cache_write_tokens: Generated<number>;
  cost_usd: ColumnType<string, number | string, number | string>;
  created_at: Timestamp;
}

export interface TaskEventsTable {
  task_id: string;
  seq: number;
  stream_id: string;
  type: string;
  agent_id: string | null;
  message: string | null;
  payload: Json | null;
  dedupe_key: string | null;
  created_at: Timestamp;
}

export interface TaskEventCursorsTable {
  task_id: string;
  last_seq: Generated<number>;
  last_ms: ColumnType<string, number | string | undefined, number | string>;
  last_n: Generated<number>;
  /** Set when STREAM_END is stored: nothing is appended after it (migration 0021). */
  stream_ended: Generated<boolean>;
}

export interface IdempotencyRecordsTable {
  scope_hash: string;
  idempotency_key: string;
  state: 'in_progress' | 'completed';
  status_code: number | null;
  headers: Json<Record<string, string>> | null;
  body: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface TokenReservationsTable {
  call_key: string;
  task_id: string;
  session_id: string;
  tokens: number;
  /** The most the call can cost at the prices of the models it may use. */
  cost_usd: ColumnType<string, number | string | undefined, number | string>;
  created_at: Timestamp;
}

export type ScheduleStatus = 'ACTIVE' | 'PAUSED';

/** A recurring task (migration 0019). */
export interface SchedulesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  description: Generated<string>;
  cron_expression: string;
  timezone: string;
  task_query: string;
  task_context: Json;
  max_budget_per_run_usd: ColumnType<string, number | string, number | string>;
  timeout_seconds: number;
  status: ScheduleStatus;
  paused_at: Timestamp | null;
  pause_reason: string | null;
  next_run_at: Timestamp | null;
  last_run_at: Timestamp | null;
  total_runs: Generated<number>;
  successful_runs: Generated<number>;
  failed_runs: Generated<number>;
  /** The API key its runs act as; null: they act as its user (made signed in). */
  api_key_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

/** One occurrence of a schedule: its task, or why it was skipped. */
export interface ScheduleRunsTable {
  schedule_id: string;
  scheduled_for: Timestamp;
  task_id: string | null;
  skip_reason: string | null;
  triggered_at: Timestamp;
}

export interface SessionSummariesTable {
  task_id: string;
  session_id: string;
  summary: string;
  through_task_id: string;
  through_part: number;
  summarized_messages: number;
  created_at: Timestamp;
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied';

export interface ApprovalsTable {
  id: string;
  task_id: string;
  tenant_id: string;
  user_id: string;
  status: ApprovalStatus;
  reason: string;
  /** What is to be approved (e.g. the plan); any JSON. */
  action: Json<unknown>;
  modified_action: Json<unknown> | null;
  feedback: string | null;
  /** The deciding user's id (`system` for an expiry); before migration 0023, what the client sent. */
  decided_by: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
  /** The tools the approval lets the task's agents call (migration 0023). */
  tools: ColumnType<string[], string[] | undefined, string[]>;
  /** Only an approver other than the requester may approve it. */
  needs_other_approver: Generated<boolean>;
  /** Set when a tool call inside an agent's loop asked for the approval. */
  call_key: string | null;
  /** What the decider's client sent as `approved_by`: a note, not who decided. */
  approved_by_note: string | null;
}

/** One finished tool call of an agent (migration 0015). */
export interface ToolCallsTable {
  task_id: string;
  call_key: string;
  tool: string;
  input: Json<unknown>;
  output: Json<unknown> | null;
  error: string | null;
  cost_usd: ColumnType<string, number | string | undefined, number | string>;
  duration_ms: Generated<number>;
  created_at: Timestamp;
}

/** One file of a session's workspace (migration 0017); size and sha256 are computed by the database. */
export interface SessionFilesTable {
  session_id: string;
  path: string;
  content: Buffer;
  size: ColumnType<number, never, never>;
  sha256: ColumnType<string, never, never>;
  is_text: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One process identity (migration 0020): its lease, and who took over its work when it lapsed. */
export interface ExecutorsTable {
  id: string;
  hostname: string;
  pid: number;
  role: string;
  started_at: Timestamp;
  heartbeat_at: Timestamp;
  stopped_at: Timestamp | null;
  recovered_by: string | null;
  recovered_at: Timestamp | null;
  recovered_workflows: Generated<number>;
}

/** A named signal a task waits for (migration 0024): open until delivered. */
export interface TaskWaitsTable {
  task_id: string;
  signal: string;
  opened_at: Generated<Timestamp>;
  /** A timed wait's moment: the due-wait sweep delivers its signal then. */
  due_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type ReviewStatus = 'reviewing' | 'approved' | 'timed_out';

/** One turn of a plan review's conversation (spec 2.13 `rounds[]`). */
export interface ReviewTurn { role: 'assistant' | 'user'; message: string; timestamp: string }

export interface ResearchReviewsTable {
  task_id: string;
  tenant_id: string;
  user_id: string;
  query: string;
  status: ReviewStatus;
  round: Generated<number>;
  version: Generated<number>;
  current_plan: Generated<string>;
  research_brief: Generated<string>;
  rounds: Json<ReviewTurn[]>;
  feedback_lock: string | null;
  feedback_lock_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  review_deadline: Timestamp;
  retained_until: Timestamp;
}

export interface AgentMirrorTable {
  tenant_id: string;
  agent_key: string;
  config: Json<Record<string, unknown>>;
  config_hash: string;
  version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export type SwarmAgentStatus = 'active' | 'idle' | 'failed' | 'shutdown';
export type SwarmTaskStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled';

/** The swarm's shared state (migration 0028): its agents, task list, mailboxes, workspace and turns. */
export interface SwarmAgentsTable {
  task_id: string;
  name: string;
  role: string;
  status: SwarmAgentStatus;
  assignment: string | null;
  spawned_round: number;
  spawned_at: Timestamp;
  model_tier: string | null;
  paused_ms_at_spawn: Generated<string>;
  turns: Generated<number>;
  findings: string | null;
  error: string | null;
}

export interface SwarmTasksTable {
  task_id: string;
  id: string;
  description: string;
  status: SwarmTaskStatus;
  owner: string | null;
  depends_on: Generated<string[]>;
  created_by: string;
}

export interface SwarmMessagesTable {
  task_id: string;
  id: string;
  sender: string;
  recipient: string;
  body: string;
  sent_round: number | null;
  read_round: number | null;
  created_at: Generated<Timestamp>;
}

export interface SwarmWorkspaceTable {
  task_id: string;
  key: string;
  author: string;
  topic: string;
  content: string;
  round: number;
  created_at: Generated<Timestamp>;
}

export interface SwarmTurnsTable {
  task_id: string;
  agent: string;
  round: number;
  action: Json<unknown>;
  result: Generated<string>;
  answered_by: Json<unknown>;
}

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  url: string;
  events: string[];
  task_id: string | null;
  session_id: string | null;
  description: Generated<string>;
  task_webhook: Generated<boolean>;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'abandoned';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  subscription_id: string;
  tenant_id: string;
  event_type: string;
  body: string;
  status: Generated<WebhookDeliveryStatus>;
  round: Generated<number>;
  started_round: number | null;
  next_attempt_at: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  round: number;
  started_at: Timestamp;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}

/** A Responses API request (migration 0031); the task it became holds its status, answer and usage. */
export interface OpenAiResponsesTable {
  task_id: string;
  tenant_id: string;
  user_id: string;
  previous_task_id: string | null;
  model: string;
  instructions: string | null;
  input: Json<unknown[]>;
  parameters: Json<Record<string, unknown>>;
  background: Generated<boolean>;
  stored: Generated<boolean>;
  created_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface Database {
  tenants: TenantsTable;
  users: UsersTable;
  sessions: SessionsTable;
  tasks: TasksTable;
  usage_records: UsageRecordsTable;
  task_events: TaskEventsTable;
  task_event_cursors: TaskEventCursorsTable;
  idempotency_records: IdempotencyRecordsTable;
  token_reservations: TokenReservationsTable;
  session_summaries: SessionSummariesTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  refresh_tokens: RefreshTokensTable;
  audit_logs: AuditLogsTable;
  rate_limit_windows: RateLimitWindowsTable;
  stream_leases: StreamLeasesTable;
  approvals: ApprovalsTable;
  tool_calls: ToolCallsTable;
  session_files: SessionFilesTable;
  schedules: SchedulesTable;
  schedule_runs: ScheduleRunsTable;
  executors: ExecutorsTable;
  task_waits: TaskWaitsTable;
  research_reviews: ResearchReviewsTable;
  agent_mirror: AgentMirrorTable;
  swarm_agents: SwarmAgentsTable;
  swarm_tasks: SwarmTasksTable;
  swarm_messages: SwarmMessagesTable;
  swarm_workspace: SwarmWorkspaceTable;
  swarm_turns: SwarmTurnsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  openai_responses: OpenAiResponsesTable;
}

export type TaskRow = Selectable<TasksTable>;
export type NewTask = Insertable<TasksTable>;
export type SessionRow = Selectable<SessionsTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
