import type { ProviderTrafficSettings } from './llm/provider-traffic.ts';
import { Resolver } from 'node:dns/promises';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import type { Role } from './auth/caller.ts';

const Environment = Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')]);

const ROLE = '(owner|admin|member)';

/** Every setting, with the default that makes `npm start` work on a fresh machine. README lists them all. */
const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATA_DIR: Type.String({ default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  EMBEDDED_PG_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 54329 }),
  DB_POOL_SIZE: Type.Integer({ minimum: 2, maximum: 200, default: 20 }),
  ENGINE_DB_POOL_SIZE: Type.Integer({ minimum: 2, maximum: 200, default: 20 }),
  DB_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  DB_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  DB_NAMED_STATEMENTS: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '1' }),
  GATEWAY_ENV: Type.Optional(Environment),
  GATEWAY_SKIP_AUTH: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')])),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  CORS_ALLOWED_ORIGINS: Type.Optional(Type.String()),
  TASK_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 1800 }),
  AGENT_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 600 }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 1024 }),
  WORKER_MEMORY_LIMIT_MB: Type.Integer({ minimum: 64, maximum: 1_048_576, default: 1536 }),
  TENANT_WORKER_SHARE: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.5 }),
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({ minimum: 1, default: 86_400 }),
  IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  SESSION_TOKEN_BUDGET: Type.Integer({ minimum: 1, default: 1_000_000 }),
  SESSION_TTL_DAYS: Type.Integer({ minimum: 1, default: 30 }),
  EXECUTOR_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' })),
  EXECUTOR_DEAD_AFTER_SECONDS: Type.Integer({ minimum: 3, maximum: 3600, default: 30 }),
  SHUTDOWN_GRACE_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 25 }),
  MODELS_CONFIG: Type.String({ default: 'config/models.yaml' }),
  PROVIDER_RATE_WINDOW_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 60, default: 60 }),
  PROVIDER_TENANT_SHARE: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.5 }),
  PROVIDER_MAX_WAIT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 300 }),
  PROVIDER_PARK_AFTER_SECONDS: Type.Number({ minimum: 0, maximum: 3600, default: 3 }),
  PROVIDER_RETRIES: Type.Integer({ minimum: 0, maximum: 20, default: 4 }),
  PROVIDER_COOLDOWN_FAILURES: Type.Integer({ minimum: 1, maximum: 100, default: 3 }),
  PROVIDER_COOLDOWN_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 3600, default: 30 }),
  PROVIDER_STALL_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 3600, default: 300 }),
  PROVIDER_OUTAGE_WAIT_SECONDS: Type.Number({ minimum: 0, maximum: 86_400, default: 600 }),
  MCP_CONFIG: Type.String({ default: 'config/mcp.yaml' }),
  TEMPLATES_DIR: Type.String({ default: 'config/templates' }),
  SKILLS_PATH: Type.String({ default: 'config/skills' }),
  SKILLS_RELOAD_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 600_000, default: 2000 }),
  AGENTS_DIR: Type.String({ default: 'config/agents' }),
  AGENT_AVATARS_CONFIG: Type.String({ default: 'config/agent-avatars.yaml' }),
  NEWS_FEEDS: Type.String({ default: '' }),
  NEWS_FEEDS_DIR: Type.String({ default: 'config/news-feeds' }),
  SERPAPI_API_KEY: Type.Optional(Type.String()),
  SERPAPI_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://serpapi.com' }),
  ALPHA_VANTAGE_API_KEY: Type.Optional(Type.String()),
  ALPHA_VANTAGE_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://www.alphavantage.co' }),
  RESEARCH_STRATEGIES_CONFIG: Type.String({ default: 'config/research-strategies.yaml' }),
  CITATION_CREDIBILITY_CONFIG: Type.String({ default: 'config/citation-credibility.yaml' }),
  MOCK_DELAY_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 0 }),
  MOCK_LATENCY_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 0 }),
  DEFAULT_TASK_MODE: Type.Enum(['auto', 'simple'], { default: 'auto' }),
  EVENT_PARTIAL_INTERVAL_MS: Type.Integer({ minimum: 1, maximum: 10_000, default: 50 }),
  EVENT_PARTIALS_ASYNC_COMMIT: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0' }),
  EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, default: 90 }),
  PARTIAL_EVENT_RETENTION_HOURS: Type.Integer({ minimum: 24, default: 24 }),
  SSE_PING_INTERVAL_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  STREAM_INACTIVITY_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 300 }),
  STREAM_BUFFER_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  MAX_STREAMS_PER_KEY: Type.Integer({ minimum: 1, default: 100 }),
  HTTP_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  HTTP_IDLE_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  STREAM_CREDENTIAL_CHECK_SECONDS: Type.Integer({ minimum: 1, maximum: 30, default: 30 }),
  TASK_TOKEN_BUDGET: Type.Integer({ minimum: 1, default: 1_000_000 }),
  BUDGET_EXHAUSTED_ACTION: Type.Enum(['pause', 'fail'], { default: 'pause' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, default: 900 }),
  REFRESH_TOKEN_TTL_DAYS: Type.Integer({ minimum: 1, default: 30 }),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  LOGIN_ATTEMPTS_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 5 }),
  LOGIN_ATTEMPTS_PER_IP: Type.Integer({ minimum: 1, default: 30 }),
  POLICY_FILE: Type.Optional(Type.String()),
  POLICY_MODE: Type.Optional(Type.Enum(['enforce', 'dry-run', 'off'])),
  OPENAI_REQUESTS_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  OPENAI_TOKENS_PER_MINUTE: Type.Integer({ minimum: 1, default: 200_000 }),
  OPENAI_ADS_MODEL: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0' }),
  CHAT_COMPLETION_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 2100 }),
  APPROVAL_ENABLED: Type.Enum(['0', '1', 'false', 'true'], { default: 'false' }),
  APPROVAL_COMPLEXITY_THRESHOLD: Type.Number({ minimum: 0, maximum: 1, default: 0.5 }),
  APPROVAL_DANGEROUS_TOOLS: Type.String({ default: 'file_system,code_execution,bash,file_write,python_executor' }),
  APPROVAL_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 1800 }),
  APPROVAL_SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 5000 }),
  REVIEW_RETENTION_SECONDS: Type.Integer({ minimum: 0, maximum: 86_400, default: 300 }),
  SWARM_ENABLED: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '1' }),
  SWARM_MAX_AGENTS: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  SWARM_MAX_ITERATIONS_PER_AGENT: Type.Integer({ minimum: 1, maximum: 500, default: 25 }),
  SWARM_AGENT_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 1800 }),
  SWARM_MAX_MESSAGES_PER_AGENT: Type.Integer({ minimum: 0, maximum: 1000, default: 20 }),
  SWARM_WORKSPACE_SNIPPET_CHARS: Type.Integer({ minimum: 50, maximum: 100_000, default: 800 }),
  SWARM_WORKSPACE_MAX_ENTRIES: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  SWARM_MAX_TOTAL_LLM_CALLS: Type.Integer({ minimum: 3, maximum: 100_000, default: 200 }),
  SWARM_MAX_TOTAL_TOKENS: Type.Integer({ minimum: 1000, default: 1_000_000 }),
  SWARM_MAX_WALL_CLOCK_MINUTES: Type.Integer({ minimum: 1, maximum: 1440, default: 30 }),
  SWARM_LEAD_CHECKPOINT_ROUNDS: Type.Integer({ minimum: 1, maximum: 100, default: 4 }),
  APPROVAL_APPROVER_ROLES: Type.String({ pattern: `^\\s*${ROLE}(\\s*,\\s*${ROLE})*\\s*$`, default: 'owner,admin' }),
  TOOLS_BASH_ENABLED: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0' }),
  TOOLS_BASH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  TOOLS_BASH_MEMORY_MB: Type.Integer({ minimum: 16, maximum: 65_536, default: 1024 }),
  BWRAP_PATH: Type.Optional(Type.String({ minLength: 1 })),
  PYTHON_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  PYTHON_MEMORY_LIMIT_MB: Type.Integer({ minimum: 64, maximum: 2048, default: 512 }),
  PYTHON_MAX_SANDBOXES: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  PYTHON_TENANT_SHARE: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.5 }),
  PYTHON_WARM_SANDBOXES: Type.Integer({ minimum: 0, maximum: 16, default: 2 }),
  PYTHON_QUEUE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  TOOLS_NETWORK_ALLOW: Type.String({ default: '' }),
  TOOLS_FETCH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 15_000 }),
  TOOLS_FETCH_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 1_073_741_824, default: 5_242_880 }),
  TOOLS_DNS_SERVERS: Type.String({ default: '' }),
  TOOLS_PARSE_THREADS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  TOOLS_PARSE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  TOOLS_PARSE_MEMORY_MB: Type.Integer({ minimum: 64, maximum: 4096, default: 256 }),
  CHROMIUM_PATH: Type.Optional(Type.String({ minLength: 1 })),
  BROWSER_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 20_000 }),
  WEB_SEARCH_PROVIDER: Type.Enum(['fixture', 'tavily', 'brave', 'searxng', 'exa'], { default: 'fixture' }),
  WEB_SEARCH_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 120, default: 15 }),
  SEARCH_CORPUS_DIR: Type.String({ default: 'config/search-corpus' }),
  TAVILY_API_KEY: Type.Optional(Type.String()),
  TAVILY_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://api.tavily.com' }),
  BRAVE_API_KEY: Type.Optional(Type.String()),
  BRAVE_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://api.search.brave.com' }),
  SEARXNG_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  EXA_API_KEY: Type.Optional(Type.String()),
  EXA_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://api.exa.ai' }),
  WORKSPACE_MAX_FILE_BYTES: Type.Integer({ minimum: 1, maximum: 1_073_741_824, default: 1_048_576 }),
  WORKSPACE_MAX_BYTES: Type.Integer({ minimum: 1, default: 20_971_520 }),
  WORKSPACE_MAX_FILES: Type.Integer({ minimum: 1, default: 500 }),
  SCHEDULE_MAX_PER_USER: Type.Integer({ minimum: 1, default: 50 }),
  SCHEDULE_MIN_INTERVAL_MINS: Type.Integer({ minimum: 1, default: 60 }),
  SCHEDULE_MAX_BUDGET_USD: Type.Number({ exclusiveMinimum: 0, default: 10 }),
  SCHEDULE_CATCHUP_SECONDS: Type.Integer({ minimum: 0, default: 300 }),
  SCHEDULE_POLL_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
  WEBHOOK_RETRY_DELAYS_MS: Type.String({ pattern: '^\\s*\\d+(\\s*,\\s*\\d+)*\\s*$', default: '5000,300000,1800000,7200000,18000000,36000000,36000000' }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 }),
  WEBHOOK_SECRET_GRACE_SECONDS: Type.Integer({ minimum: 0, maximum: 30 * 86_400, default: 86_400 }),
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ minimum: 1, default: 30 }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  METRICS_HOST: Type.Optional(Type.String()),
});

/** The swarm's limits (spec 8), each a setting. */
export interface SwarmLimits {
  maxAgents: number;
  /** Turns one agent takes at most; then it goes idle with what it has. */
  maxIterationsPerAgent: number;
  agentTimeoutSeconds: number;
  maxMessagesPerAgent: number;
  /** How much of a workspace entry an agent or the lead is shown. */
  workspaceSnippetChars: number;
  /** How many of the latest workspace entries they are shown. */
  workspaceMaxEntries: number;
  maxTotalLlmCalls: number;
  maxTotalTokens: number;
  maxWallClockMinutes: number;
  /** The lead decides at least every this many rounds, even when nothing woke it (reference: a checkpoint every 2 min). */
  leadCheckpointRounds: number;
}

/** Used only in development when JWT_SECRET is unset; the server refuses it in production. */
export const DEVELOPMENT_JWT_SECRET = 'agentgate-development-secret-do-not-use-in-production';

export type ProcessRole = 'all' | 'gateway' | 'worker';
export type EnvironmentName = Static<typeof Environment>;
export type WebSearchProviderName = 'fixture' | 'tavily' | 'brave' | 'searxng' | 'exa';

/** Who may read /metrics, and where it is served (see probes/metrics-access.ts). */
export interface MetricsSettings {
  /** When set, /metrics answers only `Authorization: Bearer <token>`. */
  token: string | undefined;
  /** When set, /metrics is served on a listener of its own (also in a worker process) and not on the API's. */
  port: number | undefined;
  host: string;
}

/**
 * The python_executor sandboxes (src/tools/python/): each program runs in a sandbox process of its own, at most
 * `maxSandboxes` at once in this process, `tenantSandboxes` of them for one tenant, beside `warmSandboxes` idle
 * spares loaded in advance.
 */
export interface PythonSettings {
  /** A program is stopped after running this long (waiting for its turn and loading do not count). */
  timeoutMs: number;
  /** The sandbox's WebAssembly memory, Python's heap included; beyond it Python gets a MemoryError. */
  memoryLimitMb: number;
  maxSandboxes: number;
  tenantSandboxes: number;
  warmSandboxes: number;
  /** A call that waited this long for its turn ends with an error saying so. */
  queueTimeoutMs: number;
}

/** Where web_search sends its queries; a vendor chosen without its key still starts, and its calls say what is missing. */
export interface WebSearchSettings {
  provider: WebSearchProviderName;
  timeoutMs: number;
  /** A vendor's answer longer than this is refused (TOOLS_FETCH_MAX_BYTES, the largest body any tool reads). */
  maxAnswerBytes: number;
  /** The offline corpus the `fixture` provider searches. */
  corpusDir: string;
  tavily: { apiKey: string | undefined; baseUrl: string };
  brave: { apiKey: string | undefined; baseUrl: string };
  /** SearXNG is self-hosted: there is no public default. */
  searxng: { baseUrl: string | undefined };
  exa: { apiKey: string | undefined; baseUrl: string };
}

export interface NewsSettings {
  /** The feeds read when a call names none (NEWS_FEEDS). */
  feeds: string[];
  /** The offline feed set (NEWS_FEEDS_DIR): each file is served at its own url while offline. */
  fixtureDir: string;
  /** WEB_SEARCH_PROVIDER=fixture: feeds of the offline set are read from it, and with none configured, all of them. */
  offline: boolean;
}

export interface VendorApi { apiKey: string | undefined; baseUrl: string }

export interface VendorSettings {
  serpApi: VendorApi;
  alphaVantage: VendorApi;
  timeoutMs: number;
  maxAnswerBytes: number;
}

export interface Config {
  environment: EnvironmentName;
  role: ProcessRole;
  host: string;
  port: number;
  dataDir: string;
  /** External Postgres; when absent the embedded one under dataDir is used. */
  databaseUrl: string | undefined;
  embeddedPostgresPort: number;
  /** The gateway's connection pool (the engine keeps its own). */
  databasePool: { size: number; queryTimeoutMs: number; connectTimeoutMs: number; namedStatements: boolean };
  /** Connections of the workflow engine's own pool (its step records and queues). */
  enginePoolSize: number;
  skipAuth: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  http: {
    /** Spec 8: reading a request, and a connection silent mid-exchange, give up after this (streams and waiting completions excepted). */
    timeoutMs: number;
    /** Spec 8: an idle kept-alive connection is closed after this. */
    idleTimeoutMs: number;
  };
  /** Browser origins answered with CORS headers; `*` is any (development and test default, refused in production). */
  corsAllowedOrigins: string[];
  taskTimeoutSeconds: number;
  agentTimeoutSeconds: number;
  workerConcurrency: number;
  /** Above this resident memory (MiB) the process takes no new task; they wait in the queue for any worker with room. */
  workerMemoryLimitMiB: number;
  /** The most of this process's workers one tenant's tasks may hold at once (at least one). */
  tenantWorkerLimit: number;
  idempotencyTtlSeconds: number;
  /** A request holding an Idempotency-Key longer than this without answering is presumed dead; a retry takes over. */
  idempotencyClaimTimeoutSeconds: number;
  sessionTokenBudget: number;
  sessionTtlDays: number;
  /** The engine's executor id this process asks for; unset, it takes `<host>-<n>`, the first one no live process holds. */
  executorId: string | undefined;
  /** A process whose heartbeat is this old is dead: a surviving worker hands its workflows to the others. */
  executorDeadAfterSeconds: number;
  /** On SIGTERM/SIGINT, the workflows running here may finish for this long before they are handed to other workers. */
  shutdownGraceSeconds: number;
  modelsConfigPath: string;
  /** Provider limits, retries and cooldowns (llm/provider-traffic.ts). */
  providerTraffic: ProviderTrafficSettings;
  /** MCP servers whose tools join the registry; a missing file means none. */
  mcpConfigPath: string;
  /** Where the workflow templates (`*.yaml`) are read from at start-up. */
  templatesDir: string;
  /** Where the skills (`*.md` with a front-matter header) are read from, and how often they are read again (issue 29). */
  skills: { path: string; reloadIntervalMs: number };
  /** The single-purpose agents (`*.yaml`) and their avatar presets, read at start-up. */
  agents: Readonly<{ dir: string; avatarsPath: string }>;
  /** Deep research's files, read at start-up: the strategy presets and the citation credibility rules. */
  research: { strategiesPath: string; citationRulesPath: string };
  /** How long the mock provider takes to stream an answer when the task does not say (context.mock_delay_ms). */
  mockDelayMs: number;
  /**
   * How long the mock provider waits before it answers any call (tool-call turns and structured answers included),
   * like a provider's time to first token: what benchmarks model (bench/research). mockDelayMs then paces the answer.
   */
  mockLatencyMs: number;
  /** The mode of a task that names none: `auto` plans it with a decomposition call; `simple` answers with one agent. */
  defaultTaskMode: 'auto' | 'simple';
  auth: {
    jwtSecret: string;
    accessTokenTtlSeconds: number;
    refreshTokenTtlDays: number;
    /** Requests per minute of a key on the free plan (other plans scale it; keys and tenants may override). */
    rateLimitPerMinute: number;
    loginAttemptsPerAccount: number;
    loginAttemptsPerIp: number;
  };
  openai: {
    requestsPerMinute: number;
    tokensPerMinute: number;
    /** The ads research model is listed only where this deployment flag is on. */
    adsModel: boolean;
    /** Non-streaming chat completions wait at most this long (spec 8: 35 minutes). */
    completionTimeoutSeconds: number;
  };
  policy: { file: string | undefined; mode: 'enforce' | 'dry-run' | 'off' | undefined };
  /** When a task's plan waits for a human (reference §3.2); `context.require_approval` asks for it regardless. */
  approvals: {
    enabled: boolean;
    /** A plan at least this complex (0..1) needs approval. */
    complexityThreshold: number;
    /** A plan suggesting any of these tools needs approval. */
    dangerousTools: string[];
    /** An approval undecided this long is denied (`approval timeout`). */
    timeoutSeconds: number;
    /** How often expired approvals are looked for. */
    sweepIntervalMs: number;
    /** Roles that may decide other users' approvals; an approval guarding dangerous tools needs one of them, not the requester. */
    approverRoles: Role[];
  };
  /**
   * The review of a research plan (spec 4.3): a review can be read this long after it timed out (spec 8: review
   * timeout plus 5 minutes), then it is gone. Lapsed reviews are looked for with the approvals' sweep.
   */
  reviews: { retentionSeconds: number };
  /** The swarm workflow (spec 8, reference §1.10): off, a force_swarm task runs through normal routing (rule 8). */
  swarm: SwarmLimits & { enabled: boolean };
  /** Quotas of each session's file workspace (the file tools), checked in the transaction of every write. */
  workspace: { maxFileBytes: number; maxBytes: number; maxFiles: number };
  /**
   * The `bash` tool: off unless an operator turns it on; then each command runs in a bubblewrap sandbox
   * (tools/bash/), killed at timeoutMs, each of its processes limited to memoryMb of address space.
   */
  bash: { enabled: boolean; timeoutMs: number; memoryMb: number; bwrapPath: string };
  python: Readonly<PythonSettings>;
  /** The outbound network guard of every networked tool (src/tools/network/). */
  network: {
    /** Host names, `host:port`s, IP addresses and CIDR ranges opened although not public (TOOLS_NETWORK_ALLOW). */
    allow: string[];
    /** One fetch, redirects and body included, gives up after this. */
    fetchTimeoutMs: number;
    /** A response body is cut after this many bytes. */
    fetchMaxBytes: number;
    /** The DNS servers (`ip`, `ip:port`, `[ipv6]:port`) tools resolve names with; empty: the system's resolver. */
    dnsServers: string[];
  };
  /**
   * The worker threads that read what the tools fetch (HTML, PDF, robots.txt): at most `threads` at once, each
   * stopped at timeoutMs of reading and at memoryMb of heap (and as much again of buffers).
   */
  parse: { threads: number; timeoutMs: number; memoryMb: number };
  /** The browser_* tools: a system Chromium (CHROMIUM_PATH, else found on PATH); one call gives up after timeoutMs. */
  browser: { chromiumPath: string | undefined; timeoutMs: number };
  budgets: {
    /** Tokens one task may spend unless its context sets `token_budget`. */
    taskTokens: number;
    /** At 100 % of a budget the task pauses (reason `budget`) or fails. */
    onExhausted: 'pause' | 'fail';
  };
  events: {
    /** Token deltas are coalesced into one LLM_PARTIAL at most this often. */
    partialIntervalMs: number;
    /** Batches of token deltas only commit without waiting for the WAL flush (see docs/decisions.md). */
    asyncPartialCommits: boolean;
    retentionDays: number;
    partialRetentionHours: number;
  };
  streams: {
    pingIntervalMs: number;
    inactivityTimeoutMs: number;
    /** A consumer this far behind (bytes buffered for it) is cut off with an error event. */
    bufferLimitBytes: number;
    maxPerKey: number;
    /** An open stream re-checks the credential that opened it this often; revoked or expired, the stream ends. */
    credentialCheckMs: number;
  };
  webSearch: Readonly<WebSearchSettings>;
  /** News feeds the news tools read when a call names none; offline (the fixture search provider) they come from `dir`. */
  news: Readonly<NewsSettings>;
  /** Vendor APIs of the agents' tools; a missing key is named by the call that needs it. */
  vendors: Readonly<VendorSettings>;
  /** Schedules (spec 4.7, 8): limits checked when one is created or changed, and how due runs are picked up. */
  schedules: {
    maxPerUser: number;
    /** Two consecutive runs may not be closer than this. */
    minIntervalMinutes: number;
    maxBudgetUsd: number;
    /** A run missed while no process was up still starts if one comes back within this; later it is skipped. */
    catchUpSeconds: number;
    /** How often a worker looks for due runs. */
    pollIntervalMs: number;
  };
  /** Outbound webhooks (src/webhooks/): their retry schedule, each attempt's time limit, rotation and pick-up. */
  webhooks: {
    /** The waits between a failed attempt and the next; after the last, the delivery has failed. */
    retryDelaysMs: readonly number[];
    timeoutMs: number;
    /** How long a rotated-out secret still signs deliveries (a second signature). */
    secretGraceSeconds: number;
    /** How often a worker starts the deliveries enqueued since (each by a durable workflow). */
    pollIntervalMs: number;
    /** Finished deliveries are listed (and can be replayed) for this long. */
    deliveryRetentionDays: number;
  };
  metrics: Readonly<MetricsSettings>;
  /**
   * The environment the model registry reads provider credentials, base URLs and model ids from: all of it, since
   * models.yaml may name any variable (`api_key_env: AZURE_OPENAI_KEY`), not only the usual providers' ones.
   */
  providerEnv: Readonly<Record<string, string | undefined>>;
  /**
   * OpenTelemetry traces (tracesWanted). The SDK reads the OTEL_* variables itself, but for the sampler: that is
   * read here (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), so that the gateway, not a caller, decides (start-tracing.ts).
   */
  tracing: { enabled: boolean; sampler: TraceSampler };
  version: string;
}

export class ConfigError extends Error {
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads env into one frozen, validated object; reports every bad variable at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, role: ProcessRole = 'all'): Readonly<Config> {
  const known = Object.fromEntries(
    Object.keys(EnvSchema.properties).filter((key) => env[key] !== undefined && env[key] !== '').map((key) => [key, env[key]]),
  );
  const values = Value.Default(EnvSchema, Value.Convert(EnvSchema, known)) as Static<typeof EnvSchema>;
  const errors = Value.Errors(EnvSchema, values);
  if (errors.length > 0) {
    const problems = new Map(errors.map((error) => [error.instancePath, error.message]));
    throw new ConfigError([...problems].map(([instancePath, message]) =>
      `${instancePath.replace(/^\//, '') || 'env'}: ${message} (got ${JSON.stringify(valueAt(known, instancePath))})`));
  }
  const environment = values.GATEWAY_ENV ?? 'development';
  const skipAuth = values.GATEWAY_SKIP_AUTH === undefined ? environment === 'development' : values.GATEWAY_SKIP_AUTH === '1';
  const corsAllowedOrigins = (values.CORS_ALLOWED_ORIGINS ?? (environment === 'production' ? '' : '*'))
    .split(',').map((origin) => origin.trim()).filter(Boolean);
  checkSecurity(environment, skipAuth, values.JWT_SECRET, corsAllowedOrigins);
  checkMetricsPort(values.PORT, values.METRICS_PORT);
  const dnsServers = values.TOOLS_DNS_SERVERS.split(',').map((server) => server.trim()).filter(Boolean);
  checkDnsServers(dnsServers);
  return Object.freeze({
    environment,
    role,
    host: values.HOST,
    port: values.PORT,
    dataDir: path.resolve(values.DATA_DIR),
    databaseUrl: values.DATABASE_URL,
    embeddedPostgresPort: values.EMBEDDED_PG_PORT,
    enginePoolSize: values.ENGINE_DB_POOL_SIZE,
    databasePool: Object.freeze({
      size: values.DB_POOL_SIZE, queryTimeoutMs: values.DB_QUERY_TIMEOUT_MS, connectTimeoutMs: values.DB_CONNECT_TIMEOUT_MS,
      namedStatements: values.DB_NAMED_STATEMENTS === '1',
    }),
    skipAuth,
    logLevel: values.LOG_LEVEL,
    bodyLimitBytes: values.BODY_LIMIT_BYTES,
    http: { timeoutMs: values.HTTP_TIMEOUT_SECONDS * 1000, idleTimeoutMs: values.HTTP_IDLE_TIMEOUT_SECONDS * 1000 },
    corsAllowedOrigins,
    taskTimeoutSeconds: values.TASK_TIMEOUT_SECONDS,
    agentTimeoutSeconds: values.AGENT_TIMEOUT_SECONDS,
    workerConcurrency: values.WORKER_CONCURRENCY,
    workerMemoryLimitMiB: values.WORKER_MEMORY_LIMIT_MB,
    tenantWorkerLimit: Math.max(1, Math.floor(values.WORKER_CONCURRENCY * values.TENANT_WORKER_SHARE)),
    idempotencyTtlSeconds: values.IDEMPOTENCY_TTL_SECONDS,
    idempotencyClaimTimeoutSeconds: values.IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS,
    sessionTokenBudget: values.SESSION_TOKEN_BUDGET,
    sessionTtlDays: values.SESSION_TTL_DAYS,
    executorId: values.EXECUTOR_ID,
    executorDeadAfterSeconds: values.EXECUTOR_DEAD_AFTER_SECONDS,
    shutdownGraceSeconds: values.SHUTDOWN_GRACE_SECONDS,
    modelsConfigPath: path.resolve(values.MODELS_CONFIG),
    providerTraffic: {
      windowMs: values.PROVIDER_RATE_WINDOW_SECONDS * 1000,
      tenantShare: values.PROVIDER_TENANT_SHARE,
      maxWaitMs: values.PROVIDER_MAX_WAIT_SECONDS * 1000,
      parkAfterMs: values.PROVIDER_PARK_AFTER_SECONDS * 1000,
      retries: values.PROVIDER_RETRIES,
      cooldownFailures: values.PROVIDER_COOLDOWN_FAILURES,
      cooldownMs: values.PROVIDER_COOLDOWN_SECONDS * 1000,
      stallMs: values.PROVIDER_STALL_SECONDS * 1000,
      outageWaitMs: values.PROVIDER_OUTAGE_WAIT_SECONDS * 1000,
    },
    mcpConfigPath: path.resolve(values.MCP_CONFIG),
    templatesDir: path.resolve(values.TEMPLATES_DIR),
    skills: Object.freeze({ path: path.resolve(values.SKILLS_PATH), reloadIntervalMs: values.SKILLS_RELOAD_INTERVAL_MS }),
    agents: Object.freeze({ dir: path.resolve(values.AGENTS_DIR), avatarsPath: path.resolve(values.AGENT_AVATARS_CONFIG) }),
    research: Object.freeze({
      strategiesPath: path.resolve(values.RESEARCH_STRATEGIES_CONFIG),
      citationRulesPath: path.resolve(values.CITATION_CREDIBILITY_CONFIG),
    }),
    mockDelayMs: values.MOCK_DELAY_MS,
    mockLatencyMs: values.MOCK_LATENCY_MS,
    defaultTaskMode: values.DEFAULT_TASK_MODE as 'auto' | 'simple',
    auth: Object.freeze({
      jwtSecret: values.JWT_SECRET ?? DEVELOPMENT_JWT_SECRET,
      accessTokenTtlSeconds: values.ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlDays: values.REFRESH_TOKEN_TTL_DAYS,
      rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
      loginAttemptsPerAccount: values.LOGIN_ATTEMPTS_PER_ACCOUNT,
      loginAttemptsPerIp: values.LOGIN_ATTEMPTS_PER_IP,
    }),
    openai: Object.freeze({
      requestsPerMinute: values.OPENAI_REQUESTS_PER_MINUTE,
      tokensPerMinute: values.OPENAI_TOKENS_PER_MINUTE,
      adsModel: values.OPENAI_ADS_MODEL === '1',
      completionTimeoutSeconds: values.CHAT_COMPLETION_TIMEOUT_SECONDS,
    }),
    policy: Object.freeze({
      file: values.POLICY_FILE === undefined ? undefined : path.resolve(values.POLICY_FILE),
      mode: values.POLICY_MODE as 'enforce' | 'dry-run' | 'off' | undefined,
    }),
    approvals: Object.freeze({
      enabled: values.APPROVAL_ENABLED === '1' || values.APPROVAL_ENABLED === 'true',
      complexityThreshold: values.APPROVAL_COMPLEXITY_THRESHOLD,
      dangerousTools: values.APPROVAL_DANGEROUS_TOOLS.split(',').map((tool) => tool.trim()).filter(Boolean),
      timeoutSeconds: values.APPROVAL_TIMEOUT_SECONDS,
      sweepIntervalMs: values.APPROVAL_SWEEP_INTERVAL_MS,
      approverRoles: values.APPROVAL_APPROVER_ROLES.split(',').map((role) => role.trim() as Role),
    }),
    reviews: Object.freeze({ retentionSeconds: values.REVIEW_RETENTION_SECONDS }),
    swarm: Object.freeze({
      enabled: values.SWARM_ENABLED === '1',
      maxAgents: values.SWARM_MAX_AGENTS,
      maxIterationsPerAgent: values.SWARM_MAX_ITERATIONS_PER_AGENT,
      agentTimeoutSeconds: values.SWARM_AGENT_TIMEOUT_SECONDS,
      maxMessagesPerAgent: values.SWARM_MAX_MESSAGES_PER_AGENT,
      workspaceSnippetChars: values.SWARM_WORKSPACE_SNIPPET_CHARS,
      workspaceMaxEntries: values.SWARM_WORKSPACE_MAX_ENTRIES,
      maxTotalLlmCalls: values.SWARM_MAX_TOTAL_LLM_CALLS,
      maxTotalTokens: values.SWARM_MAX_TOTAL_TOKENS,
      maxWallClockMinutes: values.SWARM_MAX_WALL_CLOCK_MINUTES,
      leadCheckpointRounds: values.SWARM_LEAD_CHECKPOINT_ROUNDS,
    }),
    workspace: Object.freeze({
      maxFileBytes: values.WORKSPACE_MAX_FILE_BYTES, maxBytes: values.WORKSPACE_MAX_BYTES, maxFiles: values.WORKSPACE_MAX_FILES,
    }),
    bash: Object.freeze({
      enabled: values.TOOLS_BASH_ENABLED === '1', timeoutMs: values.TOOLS_BASH_TIMEOUT_MS, memoryMb: values.TOOLS_BASH_MEMORY_MB,
      bwrapPath: values.BWRAP_PATH ?? '/usr/bin/bwrap',
    }),
    python: Object.freeze({
      timeoutMs: values.PYTHON_TIMEOUT_MS,
      memoryLimitMb: values.PYTHON_MEMORY_LIMIT_MB,
      maxSandboxes: values.PYTHON_MAX_SANDBOXES,
      tenantSandboxes: Math.max(1, Math.floor(values.PYTHON_MAX_SANDBOXES * values.PYTHON_TENANT_SHARE)),
      warmSandboxes: values.PYTHON_WARM_SANDBOXES,
      queueTimeoutMs: values.PYTHON_QUEUE_TIMEOUT_MS,
    }),
    network: Object.freeze({
      allow: values.TOOLS_NETWORK_ALLOW.split(',').map((entry) => entry.trim()).filter(Boolean),
      fetchTimeoutMs: values.TOOLS_FETCH_TIMEOUT_MS,
      fetchMaxBytes: values.TOOLS_FETCH_MAX_BYTES,
      dnsServers,
    }),
    parse: Object.freeze({ threads: values.TOOLS_PARSE_THREADS, timeoutMs: values.TOOLS_PARSE_TIMEOUT_MS, memoryMb: values.TOOLS_PARSE_MEMORY_MB }),
    browser: Object.freeze({ chromiumPath: values.CHROMIUM_PATH, timeoutMs: values.BROWSER_TIMEOUT_MS }),
    budgets: Object.freeze({
      taskTokens: values.TASK_TOKEN_BUDGET,
      onExhausted: values.BUDGET_EXHAUSTED_ACTION as 'pause' | 'fail',
    }),
    events: Object.freeze({
      partialIntervalMs: values.EVENT_PARTIAL_INTERVAL_MS,
      asyncPartialCommits: values.EVENT_PARTIALS_ASYNC_COMMIT === '1',
      retentionDays: values.EVENT_RETENTION_DAYS,
      partialRetentionHours: values.PARTIAL_EVENT_RETENTION_HOURS,
    }),
    streams: Object.freeze({
      pingIntervalMs: values.SSE_PING_INTERVAL_MS,
      inactivityTimeoutMs: values.STREAM_INACTIVITY_TIMEOUT_SECONDS * 1000,
      bufferLimitBytes: values.STREAM_BUFFER_LIMIT_BYTES,
      maxPerKey: values.MAX_STREAMS_PER_KEY,
      credentialCheckMs: values.STREAM_CREDENTIAL_CHECK_SECONDS * 1000,
    }),
    webSearch: webSearchSettings(values),
    news: Object.freeze({
      feeds: values.NEWS_FEEDS.split(',').map((feed) => feed.trim()).filter(Boolean),
      fixtureDir: path.resolve(values.NEWS_FEEDS_DIR),
      offline: values.WEB_SEARCH_PROVIDER === 'fixture',
    }),
    vendors: Object.freeze({
      serpApi: Object.freeze({ apiKey: values.SERPAPI_API_KEY, baseUrl: values.SERPAPI_BASE_URL }),
      alphaVantage: Object.freeze({ apiKey: values.ALPHA_VANTAGE_API_KEY, baseUrl: values.ALPHA_VANTAGE_BASE_URL }),
      timeoutMs: values.WEB_SEARCH_TIMEOUT_SECONDS * 1000,
      maxAnswerBytes: values.TOOLS_FETCH_MAX_BYTES,
    }),
    schedules: Object.freeze({
      maxPerUser: values.SCHEDULE_MAX_PER_USER,
      minIntervalMinutes: values.SCHEDULE_MIN_INTERVAL_MINS,
      maxBudgetUsd: values.SCHEDULE_MAX_BUDGET_USD,
      catchUpSeconds: values.SCHEDULE_CATCHUP_SECONDS,
      pollIntervalMs: values.SCHEDULE_POLL_INTERVAL_MS,
    }),
    webhooks: Object.freeze({
      retryDelaysMs: Object.freeze(values.WEBHOOK_RETRY_DELAYS_MS.split(',').map((delay) => Number(delay.trim()))),
      timeoutMs: values.WEBHOOK_TIMEOUT_MS,
      secretGraceSeconds: values.WEBHOOK_SECRET_GRACE_SECONDS,
      pollIntervalMs: values.WEBHOOK_POLL_INTERVAL_MS,
      deliveryRetentionDays: values.WEBHOOK_DELIVERY_RETENTION_DAYS,
    }),
    metrics: Object.freeze({ token: values.METRICS_TOKEN, port: values.METRICS_PORT, host: values.METRICS_HOST ?? values.HOST }),
    providerEnv: Object.freeze({ ...env }),
    tracing: Object.freeze({ enabled: tracesWanted(env), sampler: traceSampler(env) }),
    version: '0.1.0',
  });
}

/**
 * Skip-auth only in development; production needs its own JWT secret (spec 5.3, DESIGN principle 6) and
 * names the browser origins it serves rather than answering every one.
 */
function checkSecurity(environment: EnvironmentName, skipAuth: boolean, jwtSecret: string | undefined, corsAllowedOrigins: string[]): void {
  const problems: string[] = [];
  if (skipAuth && environment !== 'development') {
    problems.push(`GATEWAY_SKIP_AUTH: authentication can be skipped only with GATEWAY_ENV=development (it is ${environment})`);
  }
  if (environment === 'production' && (!jwtSecret || jwtSecret === DEVELOPMENT_JWT_SECRET)) {
    problems.push('JWT_SECRET: production needs its own secret of at least 32 characters');
  }
  if (environment === 'production' && corsAllowedOrigins.includes('*')) {
    problems.push('CORS_ALLOWED_ORIGINS: `*` is refused in production; list the allowed origins (comma-separated), or leave it unset to allow none');
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

function checkMetricsPort(port: number, metricsPort: number | undefined): void {
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError([`METRICS_PORT: must differ from PORT (${port}); leave it unset to serve /metrics on the API's port`]);
  }
}

/** The list is checked by the resolver that will use it, so what passes here is what it accepts. */
function checkDnsServers(dnsServers: string[]): void {
  try {
    new Resolver().setServers(dnsServers);
  } catch (error) {
    throw new ConfigError([
      `TOOLS_DNS_SERVERS: ${(error as Error).message} (give IP addresses, each with an optional port: 10.0.0.53, 10.0.0.53:5353, [fd00::53]:5353)`,
    ]);
  }
}

function webSearchSettings(values: Static<typeof EnvSchema>): Readonly<WebSearchSettings> {
  return Object.freeze({
    provider: values.WEB_SEARCH_PROVIDER as WebSearchProviderName,
    timeoutMs: values.WEB_SEARCH_TIMEOUT_SECONDS * 1000,
    maxAnswerBytes: values.TOOLS_FETCH_MAX_BYTES,
    corpusDir: path.resolve(values.SEARCH_CORPUS_DIR),
    tavily: Object.freeze({ apiKey: values.TAVILY_API_KEY, baseUrl: values.TAVILY_BASE_URL }),
    brave: Object.freeze({ apiKey: values.BRAVE_API_KEY, baseUrl: values.BRAVE_BASE_URL }),
    searxng: Object.freeze({ baseUrl: values.SEARXNG_BASE_URL }),
    exa: Object.freeze({ apiKey: values.EXA_API_KEY, baseUrl: values.EXA_BASE_URL }),
  });
}

function valueAt(object: Record<string, unknown>, instancePath: string): unknown {
  const key = instancePath.replace(/^\//, '');
  return key ? object[key] : undefined;
}

/** The samplers of OTEL_TRACES_SAMPLER the OpenTelemetry SDK for Node knows. */
const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export interface TraceSampler {
  name: (typeof TRACE_SAMPLERS)[number];
  /** The share of traces kept by the `traceidratio` samplers. */
  ratio: number;
}

/**
 * OTEL_TRACES_SAMPLER (default `parentbased_always_on`, as in the SDK) and OTEL_TRACES_SAMPLER_ARG (the ratio, 0 to 1,
 * default 1). Checked only when traces are on: the variables may be set for other services of a host.
 */
function traceSampler(env: NodeJS.ProcessEnv): TraceSampler {
  if (!tracesWanted(env)) return { name: 'parentbased_always_on', ratio: 1 };
  const name = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on';
  const argument = env.OTEL_TRACES_SAMPLER_ARG?.trim() ?? '';
  const ratio = argument === '' ? 1 : Number(argument);
  const problems = [
    ...(TRACE_SAMPLERS.includes(name as TraceSampler['name']) ? [] : [`OTEL_TRACES_SAMPLER: must be one of ${TRACE_SAMPLERS.join(', ')} (it is ${name})`]),
    ...(ratio >= 0 && ratio <= 1 ? [] : [`OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (it is ${argument})`]),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return { name: name as TraceSampler['name'], ratio };
}

/**
 * Traces are exported only when the operator names a traces exporter (other than `none`) or an OTLP endpoint, and
 * OTEL_SDK_DISABLED is not `true`: left to itself the OpenTelemetry SDK would export to localhost:4318 by default.
 * The first exporter named decides, as in the SDK (`none,otlp` is off; `otlp,none` is on).
 */
export function tracesWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '' && name !== 'null');
  if (exporters.length > 0) return exporters[0] !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}
