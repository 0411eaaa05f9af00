import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import { pino, type Logger } from 'pino';
import { buildApp, buildProbeApp } from './app.ts';
import { createAdminKey, parseKeyCommand } from './auth/cli.ts';
import { purgeOldWindows } from './http/fixed-window.ts';
import { purgeExpiredIdempotencyRecords } from './http/idempotency.ts';
import { purgeIdleTranscripts } from './openai/chat-session.ts';
import { traceLogFields } from './observability/trace-log-fields.ts';
import { createSessionTitler } from './workflows/memory/session-titles.ts';
import { createStreamSlots } from './streaming/stream-slots.ts';
import { deliverDueWaits, wakeReleasedTasks } from './task-state/waits.ts';
import { wakeForCapacity } from './workflows/runtime/capacity-wait.ts';
import { purgeOldOutages } from './workflows/runtime/outage-wait.ts';
import { fireDueSchedules } from './schedules/fire-schedules.ts';
import { expireApprovals } from './approvals/expire-approvals.ts';
import { expireReviews } from './reviews/expire-reviews.ts';
import { logSerializers } from './http/log-serializers.ts';
import { loadConfig, type Config, type ProcessRole } from './config.ts';
import { connectDatabase, type DatabaseConnection } from './db/connect.ts';
import { createEventHub } from './events/event-hub.ts';
import { createGroupCommitter } from './events/group-commit.ts';
import { purgeExpiredEvents } from './events/purge-events.ts';
import { backgroundErrors } from './observability/metrics.ts';
import { createMetricsExposition } from './observability/metrics-exposition.ts';
import { startMetricsListener } from './probes/metrics-listener.ts';
import type { Deps } from './deps.ts';
import { createTaskStarter, drainEngine, launchEngine, migrateEngine, shutdownEngine, trustOwnershipWhile, workerLanes, type TaskWorkflow } from './engine/engine.ts';
import { createMemoryAdmission } from './engine/memory-admission.ts';
import { claimExecutorId, markStopped, purgeRetiredExecutors, type ExecutorIdentity } from './engine/executors.ts';
import { createExecutorLease } from './tasks/executor-lease.ts';
import { handOverWorkflows } from './tasks/hand-over-workflows.ts';
import { resumeStalledWorkflows } from './tasks/resume-stalled.ts';
import { loadModelCatalog } from './llm/model-catalog.ts';
import { createModelRegistry } from './llm/provider-registry.ts';
import { limitIdentities } from './llm/limit-identity.ts';
import { createProviderTraffic } from './llm/provider-traffic.ts';
import { loadPolicy } from './policy/policy.ts';
import { createBuiltInToolRegistry } from './tools/built-ins.ts';
import { checkBashSandbox } from './tools/bash/check-sandbox.ts';
import { logWebSearchSetup } from './tools/web-search/choose-provider.ts';
import { startMcpServers } from './tools/mcp/mcp-servers.ts';
import { closeBrowser } from './tools/browser/shared-browser.ts';
import { closeSandboxPools } from './tools/python/sandbox-pool.ts';
import { adoptUnpartitionedWorkflows, requeueOrphanedTasks } from './tasks/requeue-orphans.ts';
import { registerTaskWorkflow } from './workflows/task-workflow.ts';
import { registerWebhookDelivery } from './webhooks/deliver-webhook.ts';
import { startPendingDeliveries } from './webhooks/start-deliveries.ts';
import { purgeFinishedDeliveries } from './webhooks/purge-deliveries.ts';
import { loadTemplateRegistry } from './workflows/modes/template/template-registry.ts';
import { loadSkillCatalogue } from './skills/skill-catalogue.ts';
import { logSkillProblems, reloadSkills } from './skills/reload-skills.ts';
import { loadAgentCatalogue } from './workflows/modes/named-agent/agent-catalogue.ts';
import { loadResearchConfig } from './workflows/modes/research/research-config.ts';

const ORPHAN_SWEEP_INTERVAL_MS = 30_000;
/** How often every process looks for tasks parked for provider capacity (the loop then runs while any wait). */
const CAPACITY_GRANT_SWEEP_MS = 5_000;
/** Timed waits (a call waiting out its providers' outage) end within this of their moment. */
const DUE_WAIT_SWEEP_MS = 1_000;
/** Workflows of this process that stopped running resume within seconds of the database taking writes again. */
const STALLED_SWEEP_INTERVAL_MS = 2_000;
/** Titles asked for by tasks that completed in another process, or before a crash. */
const TITLE_SWEEP_INTERVAL_MS = 5_000;
/** After the drain (SHUTDOWN_GRACE_SECONDS), handing work back and closing everything must take no longer than this. */
const SHUTDOWN_CLEANUP_MS = 10_000;
/** The exit status of a process that found its identity taken over (see exitFenced). */
const EXIT_FENCED = 75;
const EVENT_PURGE_INTERVAL_MS = 60 * 60_000;
const USAGE = 'usage: node src/main.ts <serve|migrate|keys> [--role all|gateway|worker]';

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  const config = loadConfig(process.env, command === 'serve' ? parseRole(rest) : 'all');
  const logger = pino({
    level: config.logLevel, base: { service: 'agentgate' }, redact: REDACTED_FIELDS, serializers: logSerializers,
    ...(config.tracing.enabled ? { mixin: traceLogFields } : {}),
  });
  if (command === 'migrate') return migrate(config, logger);
  if (command === 'keys') return createKey(config, logger, rest);
  if (command === 'serve') return serve(config, logger);
  throw new Error(USAGE);
}

async function migrate(config: Readonly<Config>, logger: Logger): Promise<void> {
  const connection = await connectDatabase(config, logger);
  try {
    await migrateEngine(connection.url);
  } finally {
    await connection.close();
  }
  logger.info('migrations applied');
}

/** Credentials never reach the logs (headers, and the SSE `api_key` query parameter in URLs). */
const REDACTED_FIELDS = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', '*.password', '*.refresh_token', '*.access_token'];

async function createKey(config: Readonly<Config>, logger: Logger, args: string[]): Promise<void> {
  const command = parseKeyCommand(args);
  const connection = await connectDatabase(config, logger);
  try {
    const key = await createAdminKey(connection.db, command);
    process.stdout.write(`API key for ${command.email} (tenant ${key.tenant_id}, scopes *):\n${key.key}\nStore it now: it is not shown again.\n`);
  } finally {
    await connection.close();
  }
}

/** Starts everything in dependency order and stops it in reverse on SIGINT/SIGTERM. */
async function serve(config: Readonly<Config>, logger: Logger): Promise<void> {
  // Off, the OpenTelemetry SDK is not even loaded: spans are the API's no-ops.
  const tracing = config.tracing.enabled ? (await import('./observability/start-tracing.ts')).startTracing(logger, config.version, config.tracing.sampler) : undefined;
  // Before anything starts: a process that runs tasks, with bash enabled but no working sandbox, stops start-up
  // saying what is missing (a gateway-only process runs no tool).
  if (config.bash.enabled && config.role !== 'gateway') await checkBashSandbox(config);
  // Read before the database starts: an invalid template file stops start-up at once, naming the file.
  const mcp = startMcpServers(config.mcpConfigPath, logger, config.network.fetchMaxBytes);
  const tools = createBuiltInToolRegistry(mcp.tools, config);
  logWebSearchSetup(logger, config.webSearch);
  const templates = loadTemplateRegistry(config.templatesDir, tools);
  const skills = await loadSkillCatalogue(config.skills.path);
  logSkillProblems(logger, skills.problems());
  const agents = loadAgentCatalogue(config.agents.dir, config.agents.avatarsPath, tools);
  logger.info({ agents: agents.list().length, agents_dir: config.agents.dir }, 'agent catalogue loaded');
  const research = loadResearchConfig(config.research);
  const connection = await connectDatabase(config, logger, { supervise: true });
  const catalog = loadModelCatalog(config.modelsConfigPath);
  const models = createModelRegistry(catalog, config.providerEnv, { latencyMs: config.mockLatencyMs }, createProviderTraffic(connection.db, catalog.providers, config.providerTraffic, limitIdentities(catalog.providers, config.providerEnv)));
  logger.info({ mock_only: models.isMockOnly() }, models.describe());

  const identity = await claimIdentity(connection, config);
  logger.info({ executor_id: identity.id }, 'executor identity claimed');
  const events = await createEventHub(connection.url, logger);
  const stopping = new AbortController();
  const handingOver = new AbortController();
  let taskWorkflow: TaskWorkflow | undefined;
  const lanes = workerLanes(config.role, config.workerConcurrency, config.tenantWorkerLimit);
  const admission = createMemoryAdmission(config.workerMemoryLimitMiB);
  const starter = createTaskStarter({ directLane: lanes.direct, workflow: () => taskWorkflow!, stopping: stopping.signal, admission });
  const deps: Deps = {
    config, db: connection.db, models, tools, templates, skills, agents, research, logger, events,
    appends: createGroupCommitter({ db: connection.db, hub: events, logger, asyncPartials: config.events.asyncPartialCommits }), policy: loadPolicy(config.policy.file, config.policy.mode),
    stopping: stopping.signal,
    handingOver: handingOver.signal,
    databaseHealth: connection.health,
    writeRefusals: connection.writeRefusals,
    streamSlots: createStreamSlots({ db: connection.db, config, logger }),
    titles: createSessionTitler({ config, db: connection.db, models, logger }),
    engine: starter,
    metrics: createMetricsExposition({ db: connection.db, poolUse: connection.poolUse, logger }),
  };
  taskWorkflow = registerTaskWorkflow(deps);
  const webhookDelivery = registerWebhookDelivery(deps);
  await launchEngine({
    databaseUrl: connection.url, role: config.role, queueLane: lanes.queue,
    executorId: identity.id, poolSize: config.enginePoolSize, logger, admission, namedStatements: config.databasePool.namedStatements,
  });

  await adoptUnpartitionedWorkflows(deps);
  await requeueOrphanedTasks(deps, 0);
  const lease = createExecutorLease(deps, identity, { judgesOthers: config.role !== 'gateway', onFenced: () => exitFenced(logger, identity) });
  const heartbeat = every(lease.intervalMs, () => lease.beat(), 'executor heartbeat', logger, { now: true });
  trustOwnershipWhile(() => !handingOver.signal.aborted && lease.isCertain());
  const timers = [
    every(ORPHAN_SWEEP_INTERVAL_MS, () => requeueOrphanedTasks(deps), 'orphan sweep', logger),
    every(ORPHAN_SWEEP_INTERVAL_MS, () => wakeReleasedTasks(deps), 'wake sweep', logger, { now: true }),
    every(CAPACITY_GRANT_SWEEP_MS, () => models.traffic.grantParked(wakeForCapacity(deps), stopping.signal), 'capacity grants', logger, { now: true }),
    every(DUE_WAIT_SWEEP_MS, () => deliverDueWaits(deps), 'timed waits', logger, { now: true }),
    every(config.skills.reloadIntervalMs, () => reloadSkills(skills, logger), 'skill reload', logger),
    every(STALLED_SWEEP_INTERVAL_MS, () => resumeStalledWorkflows(deps, identity.id), 'stalled workflow sweep', logger),
    every(config.approvals.sweepIntervalMs, () => expireApprovals(deps), 'approval expiry', logger, { now: true }),
    every(config.approvals.sweepIntervalMs, () => expireReviews(deps), 'plan review expiry', logger, { now: true }),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeExpiredEvents(connection.db, config.events), 'event purge', logger, { now: true }),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeOldWindows(connection.db), 'rate-limit window purge', logger),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeOldOutages(connection.db), 'model call outage purge', logger),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeExpiredIdempotencyRecords(connection.db), 'idempotency record purge', logger, { now: true }),
    ...(config.role === 'gateway' ? [] : [
      every(TITLE_SWEEP_INTERVAL_MS, () => deps.titles.sweep(), 'session titles', logger, { now: true }),
      every(config.schedules.pollIntervalMs, () => fireDueSchedules(deps), 'schedule runs', logger, { now: true }),
      every(config.webhooks.pollIntervalMs, () => startPendingDeliveries(deps, webhookDelivery), 'webhook deliveries', logger, { now: true }),
    ]),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeIdleTranscripts(connection.db, config.sessionTtlDays), 'chat transcript purge', logger),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeRetiredExecutors(connection.db), 'retired executor purge', logger),
    every(EVENT_PURGE_INTERVAL_MS, () => purgeFinishedDeliveries(connection.db, config.webhooks.deliveryRetentionDays), 'webhook delivery purge', logger),
  ];

  const app = config.role === 'worker' ? await buildProbeApp(deps) : await buildApp(deps);
  const metricsListener = config.metrics.port === undefined ? undefined : await startMetricsListener(deps, config.metrics.port);
  // Background work must never end the process (issue 10): a rejection nobody handled is logged and
  // counted. A synchronous exception that reaches the top still shuts down, as Node advises.
  process.on('unhandledRejection', (reason) => {
    backgroundErrors.inc({ source: 'unhandled_rejection' });
    logger.error({ err: reason }, 'unhandled rejection in background work; carrying on');
  });
  closeWithGrace({ delay: config.shutdownGraceSeconds * 1000 + SHUTDOWN_CLEANUP_MS, logger, skip: ['unhandledRejection'] }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal, grace_seconds: config.shutdownGraceSeconds }, 'shutting down: draining');
    // Drain: no new work here (readiness 503, new tasks to the queue, nothing dequeued), native streams end
    // naming their resume point, and the workflows running here may finish within the grace period.
    stopping.abort();
    for (const timer of timers) clearInterval(timer);
    await drainEngine(config.shutdownGraceSeconds * 1000);
    // Then the rest is handed to the other workers at once, rather than after EXECUTOR_DEAD_AFTER_SECONDS.
    handingOver.abort(new Error('this process is shutting down; the task continues on another worker'));
    await handOverWorkflows(deps, identity.id, identity.id, 'shutdown').catch((error: unknown) => logger.error({ err: error }, 'hand-over failed; the workflows are recovered once this executor counts as dead'));
    await markStopped(connection.db, identity).catch((error: unknown) => logger.error({ err: error }, 'executor identity not released'));
    clearInterval(heartbeat);
    await app.close();
    await metricsListener?.close();
    await shutdownEngine();
    await mcp.close();
    await closeBrowser();
    await closeSandboxPools();
    await events.close();
    await connection.close();
    await tracing?.shutdown();
  });
  const url = await app.listen({ host: config.host, port: config.port });
  // Logged whatever LOG_LEVEL says: where to connect, also when PORT=0 let the system choose the port.
  logger.child({}, { level: 'info' }).info({ role: config.role, url, metrics_url: metricsListener?.url, environment: config.environment }, 'agentgate started');
}

/** Claims the executor identity; a refusal (a live process holds the requested id) ends start-up with its reason. */
async function claimIdentity(connection: DatabaseConnection, config: Readonly<Config>): Promise<ExecutorIdentity> {
  try {
    return await claimExecutorId(connection.db, config.executorId, config.role, config.executorDeadAfterSeconds);
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/**
 * A process that finds its lease gone was taken for dead (it was frozen, or cut off from the database while the
 * others were not) and its workflows were handed to other workers: it exits at once, so that nothing it was
 * running goes on a second time beside them. A supervisor starts it again with a fresh lease.
 */
function exitFenced(logger: Logger, identity: ExecutorIdentity): never {
  logger.fatal({ executor_id: identity.id }, 'this executor was found dead and its workflows went to other workers; exiting so that nothing runs twice');
  process.exit(EXIT_FENCED);
}

/**
 * Runs periodic maintenance: failures are logged, counted and retried at the next tick, and a tick is
 * skipped while the previous run is still going (e.g. waiting for the database to come back).
 */
function every(intervalMs: number, work: () => Promise<unknown>, name: string, logger: Logger, options: { now?: boolean } = {}): NodeJS.Timeout {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    work()
      .catch((error) => {
        backgroundErrors.inc({ source: name });
        logger.error({ err: error }, `${name} failed`);
      })
      .finally(() => { running = false; });
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  if (options.now) run();
  return timer;
}

function parseRole(args: string[]): ProcessRole {
  let role: string;
  try {
    role = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } }).values.role;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error}; ${USAGE}`);
  }
  if (role === 'all' || role === 'gateway' || role === 'worker') return role;
  throw new Error(`invalid --role ${role}; ${USAGE}`);
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
