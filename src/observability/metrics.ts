import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's metrics, served at /metrics in the Prometheus text format. Counters and histograms count what
 * happened in this process (sum them across processes); the gauges read from the database at scrape time
 * (`agentgate_tasks`, `agentgate_queue_*`) are the same in every process of a deployment (take their max).
 */
export const metrics = new Registry();
collectDefaultMetrics({ register: metrics, prefix: 'agentgate_' });

/** Latencies of calls that wait on other systems (models, tools, queues), from 50 ms to 15 minutes. */
const LONG_WAIT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/** Errors in work no request waits for (event writes, sweeps, purges, timers): logged and counted, never fatal. */
export const backgroundErrors = new Counter({
  name: 'agentgate_background_errors_total',
  help: 'Errors in background work, by source; each was logged and the process carried on',
  labelNames: ['source'] as const,
  registers: [metrics],
});

/** Database operations run again: after a lost deadlock or serialization race, or while the database was unreachable. */
export const webhookAttempts = new Counter({
  name: 'agentgate_webhook_attempts_total',
  help: 'Webhook delivery attempts this process made, by outcome (delivered: a 2xx; failed: another status, no answer in time, refused by the network guard)',
  labelNames: ['outcome'] as const,
  registers: [metrics],
});

export const databaseRetries = new Counter({
  name: 'agentgate_database_retries_total',
  help: 'Database operations retried, by reason (conflict, unavailable, timeout)',
  labelNames: ['reason'] as const,
  registers: [metrics],
});

/** Model calls started, by the phase they serve (agent, decomposition, synthesis, …): how much a workflow asks of its models. */
export const modelCalls = new Counter({
  name: 'agentgate_model_calls_total',
  help: 'Model calls started by task workflows, by phase',
  labelNames: ['phase'] as const,
  registers: [metrics],
});

/** Route is the pattern (`/api/v1/tasks/:id`), never the raw URL, so the label set stays bounded. */
export const httpRequests = new Counter({
  name: 'agentgate_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern (unmatched for unknown URLs) and status',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers: [metrics],
});

/** Without the status: a latency histogram per status would multiply its series for little use. */
export const httpRequestDuration = new Histogram({
  name: 'agentgate_http_request_duration_seconds',
  help: 'How long HTTP requests took to answer (a stream: its whole life), by method and route pattern',
  labelNames: ['method', 'route'] as const,
  registers: [metrics],
});

/** The mode label of a task not routed yet that asked for no mode. */
export const UNROUTED_MODE = 'unrouted';

export const tasks = new Gauge({
  name: 'agentgate_tasks',
  help: 'Unfinished tasks in the database by status and mode (unrouted before routing), read at scrape; the same in every process',
  labelNames: ['status', 'mode'] as const,
  registers: [metrics],
});

export const taskWaits = new Gauge({
  name: 'agentgate_task_waits',
  help: 'Open waits of unfinished tasks by what they wait for (pause, approval, plan-review, capacity, provider-outage), read at scrape; the same in every process',
  labelNames: ['wait'] as const,
  registers: [metrics],
});

export const tasksFinished = new Counter({
  name: 'agentgate_tasks_finished_total',
  help: 'Tasks this process brought to their final status, by that status and mode',
  labelNames: ['status', 'mode'] as const,
  registers: [metrics],
});

export const queueDepth = new Gauge({
  name: 'agentgate_queue_depth',
  help: 'Workflows waiting in an engine queue, read from the database at scrape; the same in every process',
  labelNames: ['queue'] as const,
  registers: [metrics],
});

export const queueOldestWait = new Gauge({
  name: 'agentgate_queue_oldest_wait_seconds',
  help: 'How long the oldest workflow waiting in an engine queue has waited (0 when none waits), read at scrape',
  labelNames: ['queue'] as const,
  registers: [metrics],
});

export const queueWait = new Histogram({
  name: 'agentgate_queue_wait_seconds',
  help: 'Time from enqueue to dequeue of the workflows this process took from a queue for their first run',
  labelNames: ['queue'] as const,
  buckets: LONG_WAIT_BUCKETS,
  registers: [metrics],
});

export const activeWorkflows = new Gauge({
  name: 'agentgate_workflows_active',
  help: 'Task workflows executing in this process now',
  registers: [metrics],
});

/** Every request sent to a provider, fallbacks included: a model call that falls back makes more than one. */
export const modelRequests = new Counter({
  name: 'agentgate_model_requests_total',
  help: 'Requests to model providers by provider, model and outcome (ok, error, aborted)',
  labelNames: ['provider', 'model', 'outcome'] as const,
  registers: [metrics],
});

export const modelRequestDuration = new Histogram({
  name: 'agentgate_model_request_duration_seconds',
  help: 'How long requests to model providers took, whatever their outcome, by provider and model',
  labelNames: ['provider', 'model'] as const,
  buckets: LONG_WAIT_BUCKETS,
  registers: [metrics],
});

export const modelTokens = new Counter({
  name: 'agentgate_model_tokens_total',
  help: 'Tokens of answered model requests by provider, model and type (input, output; cached_input and cache_write: the parts of input read from and written to the prompt cache)',
  labelNames: ['provider', 'model', 'type'] as const,
  registers: [metrics],
});

export const modelCost = new Counter({
  name: 'agentgate_model_cost_usd_total',
  help: 'Estimated cost in US dollars of answered model requests (catalog pricing), by provider and model',
  labelNames: ['provider', 'model'] as const,
  registers: [metrics],
});

export const toolCalls = new Counter({
  name: 'agentgate_tool_calls_total',
  help: 'Tool calls by tool (unknown for a name no tool has) and outcome (ok, error, aborted, refused)',
  labelNames: ['tool', 'outcome'] as const,
  registers: [metrics],
});

export const toolCallDuration = new Histogram({
  name: 'agentgate_tool_call_duration_seconds',
  help: 'How long tool calls that ran took, by tool',
  labelNames: ['tool'] as const,
  buckets: LONG_WAIT_BUCKETS,
  registers: [metrics],
});

/** Set by the sandbox pool (src/tools/python/sandbox-pool.ts) whenever its state changes. */
export const pythonSandboxes = new Gauge({
  name: 'agentgate_python_sandboxes',
  help: 'Python sandbox processes of this process, by state: running (held by a call, loading or running its program), spare_loading, spare_ready',
  labelNames: ['state'] as const,
  registers: [metrics],
});

export const pythonSandboxCallsWaiting = new Gauge({
  name: 'agentgate_python_sandbox_calls_waiting',
  help: 'python_executor calls of this process waiting for their turn for a sandbox',
  registers: [metrics],
});

export const pythonSandboxWait = new Histogram({
  name: 'agentgate_python_sandbox_wait_seconds',
  help: 'How long python_executor calls that got a sandbox waited for their turn',
  buckets: LONG_WAIT_BUCKETS,
  registers: [metrics],
});

export const openStreams = new Gauge({
  name: 'agentgate_streams_open',
  help: 'Streams open in this process (SSE, WebSocket, streaming chat completions), by route',
  labelNames: ['route'] as const,
  registers: [metrics],
});

export const eventAppendDuration = new Histogram({
  name: 'agentgate_event_append_duration_seconds',
  help: 'Time to store task events: grouped (submitted to committed, batch wait included) or in_transaction (the statement inside a task state change)',
  labelNames: ['path'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metrics],
});

export const eventBatchAppends = new Histogram({
  name: 'agentgate_event_batch_appends',
  help: 'Appends (one caller, one task each) written together in one grouped event batch',
  buckets: [1, 2, 5, 10, 20, 50, 100],
  registers: [metrics],
});

export const eventBatchEvents = new Histogram({
  name: 'agentgate_event_batch_events',
  help: 'Events written in one grouped event batch',
  buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000],
  registers: [metrics],
});

export const databasePoolConnections = new Gauge({
  name: 'agentgate_db_pool_connections',
  help: 'Connections of the gateway\'s database pool by state (idle, busy), read at scrape; the engine\'s own pool is not included',
  labelNames: ['state'] as const,
  registers: [metrics],
});

export const databasePoolWaiting = new Gauge({
  name: 'agentgate_db_pool_waiting_requests',
  help: 'Queries waiting for a free connection of the gateway\'s database pool, read at scrape',
  registers: [metrics],
});

export const databasePoolMax = new Gauge({
  name: 'agentgate_db_pool_max_connections',
  help: 'Size of the gateway\'s database pool (DB_POOL_SIZE)',
  registers: [metrics],
});

/** Heartbeats this process wrote for its executor (ok) or failed to write (failed). Incremented by the heartbeat. */
export const executorHeartbeats = new Counter({
  name: 'agentgate_executor_heartbeats_total',
  help: 'Executor heartbeats this process wrote, by outcome (ok, failed)',
  labelNames: ['outcome'] as const,
  registers: [metrics],
});

/** Executors this process saw in its last look at the heartbeats. Set by the heartbeat. */
export const executors = new Gauge({
  name: 'agentgate_executors',
  help: 'Executor identities by state: alive, dead (lease lapsed or taken over), stopped (released by a clean shutdown)',
  labelNames: ['state'] as const,
  registers: [metrics],
});

/** A scrape reports what it can: a database read that fails or times out leaves its gauges out and is counted here. */
export const metricsReadFailures = new Counter({
  name: 'agentgate_metrics_read_failures_total',
  help: 'Scrape-time database reads that failed or timed out, by read (tasks, queues, queue_wait)',
  labelNames: ['read'] as const,
  registers: [metrics],
});
