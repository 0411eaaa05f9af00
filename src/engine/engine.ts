import { DBOS, DBOSWorkflowConflictError, Error as EngineErrors } from '@dbos-inc/dbos-sdk';
import { assertStillOwnsWorkflow } from '@dbos-inc/dbos-sdk/datasource';
import { DBOSExecutor } from '@dbos-inc/dbos-sdk/internal/dbos-executor';
import { withDbRetry } from '@dbos-inc/dbos-sdk/internal/system_database';
import { dbRetryConfig, INTERNAL_QUEUE_NAME } from '@dbos-inc/dbos-sdk/internal/utils';
import pRetry from 'p-retry';
import pg from 'pg';
import type { Logger } from 'pino';
import type { ProcessRole } from '../config.ts';
import type { TaskRow } from '../db/schema.ts';
import { IDLE_IN_TRANSACTION_TIMEOUT_MS, survivingLostConnections } from '../db/database.ts';
import { withOwnConnection } from '../db/own-connection.ts';
import { DATABASE_RETRY_MAX_WAIT_MS } from '../db/retry.ts';
import { holdQueueWhileRefused, type MemoryAdmission } from './memory-admission.ts';
import { serverStream } from '../db/server-stream.ts';
import { clientNaming, createStatementNames } from '../db/statement-names.ts';

export const TASK_QUEUE = 'agentgate-tasks';
/**
 * Durable work that is not a task (a webhook delivery): no limits, since such a workflow spends its time in durable
 * sleeps; through a queue so that any worker takes it, and takes it over from a dead one (requeueExecutorWorkflows).
 */
export const BACKGROUND_QUEUE = 'agentgate-background';
/** The engine's process-private queue, where it puts the workflows it recovers that no queue started. */
export const INTERNAL_QUEUE = INTERNAL_QUEUE_NAME;

/**
 * Fixed so that a restart on edited code still recovers the tasks in flight: left unset, DBOS derives
 * it from a hash of the workflow code and would leave earlier workflows unrecovered (STYLE.md §6).
 */
export const APPLICATION_VERSION = 'agentgate-1';
/** Longer than any engine migration takes; a process that waits longer gives up with the reason. */
const ENGINE_SCHEMA_LOCK_WAIT_MS = 5 * 60_000;
/** The engine's own default for opening a connection. */
const ENGINE_CONNECT_TIMEOUT_MS = 10_000;

export interface EngineOptions {
  databaseUrl: string;
  role: ProcessRole;
  /** The workers of this process the queue may fill; the queue is partitioned by tenant. */
  queueLane: WorkerLane;
  executorId: string;
  poolSize: number;
  logger: Logger;
  /** While it refuses, the process takes nothing from the task queue. */
  admission: MemoryAdmission;
  /** Prepare the engine's per-task statements by name on each connection (DB_NAMED_STATEMENTS). */
  namedStatements: boolean;
}

let enginePool: pg.Pool | undefined;

/**
 * The engine waits out an unreachable database on its own for its records of steps and workflows, doubling its wait
 * from 1 s up to a minute. After an outage of tens of seconds its next attempt could come most of a minute after the
 * database came back, with the task stalled behind it (a 12 s outage kept tasks waiting 18 s past the return). Its
 * waits are kept to ours (DATABASE_RETRY_MAX_WAIT_MS), less the half its jitter may add, and start at our first.
 * The engine reads these settings at each retry and offers no option for them.
 */
export function keepEngineRetriesShort(): void {
  const engineJitter = 1.5;
  dbRetryConfig.initialBackoffSec = 0.1;
  dbRetryConfig.maxBackoffSec = DATABASE_RETRY_MAX_WAIT_MS / 1000 / engineJitter;
}

/** Launches DBOS on our own database. Every workflow must already be registered. */
export async function launchEngine(options: EngineOptions): Promise<void> {
  const log = options.logger.child({ component: 'dbos' });
  enginePool = createEnginePool(options, log);
  keepEngineRetriesShort();
  DBOS.setConfig({
    name: 'agentgate',
    systemDatabaseUrl: withIdleTransactionTimeout(options.databaseUrl),
    systemDatabasePool: enginePool,
    applicationVersion: APPLICATION_VERSION,
    executorID: options.executorId,
    // A gateway-only process enqueues but never dequeues; workers and `all` take from the task queue.
    listenQueues: options.role === 'gateway' ? [] : undefined,
    logger: {
      info: (entry) => log.debug(String(entry)),
      debug: (entry) => log.trace(String(entry)),
      warn: (entry) => log.warn(String(entry)),
      error: (entry) => log.error({ err: entry }, 'engine error'),
    },
  });
  if (options.role !== 'gateway') holdQueueWhileRefused(TASK_QUEUE, options.admission, options.logger);
  await withEngineSchemaLock(options.databaseUrl, async (client) => {
    await DBOS.launch();
    if (!leaveOwnRecordsUnrecorded()) options.logger.warn('the engine\'s step recording was not found: every step outcome is recorded, those already durable in the task\'s own rows too');
    if (!skipRepeatedCancelChecks()) options.logger.warn('the engine\'s cancel check was not found: each step reads its workflow\'s status twice on entering');
    if (!startDirectWorkflowsInOneStatement()) options.logger.warn('the engine\'s start of a workflow was not found: a direct start takes four statements');
    if (!readStepRecordsWithStatus()) options.logger.warn('the engine\'s read of a step\'s record was not found: each step reads its workflow\'s status and its record in two statements');
    await fenceClaims(client);
  });
  await DBOS.registerQueue(TASK_QUEUE, {
    workerConcurrency: options.queueLane.workers,
    partitionWorkerConcurrency: Math.min(options.queueLane.perTenant, options.queueLane.workers),
    // DBOS polls each queue at this interval while it is idle (it backs off only on contention), and a process
    // enqueuing does not wake its own poller: the interval is the latency of a queued start or a parked task's
    // resume. 100 ms keeps that small; at 50 ms an idle process and its Postgres backends used 7 % of a core (5 % now).
    minPollingIntervalMs: 100,
    onConflict: 'always_update',
  });
  // Webhook deliveries: half a second more on a delivery is nothing to its receiver.
  await DBOS.registerQueue(BACKGROUND_QUEUE, { minPollingIntervalMs: 500, onConflict: 'always_update' });
}

/**
 * The engine's connections, in a pool of ours: the engine's own pool leaves a connection it holds without an
 * 'error' listener at moments, and a session cut then ended the process (see survivingLostConnections).
 */
function createEnginePool(options: EngineOptions, log: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: withIdleTransactionTimeout(options.databaseUrl),
    stream: serverStream,
    ...(options.namedStatements ? { Client: clientNaming(engineStatementNames()) } : {}),
    max: options.poolSize,
    // What the engine names its own connections: who is connected reads the same in pg_stat_activity.
    application_name: `dbos_transact_${options.executorId}_${APPLICATION_VERSION}`,
    connectionTimeoutMillis: ENGINE_CONNECT_TIMEOUT_MS,
  });
  return survivingLostConnections(pool, (error) => log.debug({ err: error }, 'engine connection lost'));
}

/**
 * The engine's statements that every task runs, each on one workflow by its key: its start (the status and input
 * inserts), the cancel check and step-record read before a step, its end (the status update and output insert).
 * Parsing and planning them anew for every execution was a seventh of Postgres's CPU per streamed chat completion
 * (docs/decisions.md, "Issue 30: the engine's per-task statements prepared by name"). The queue's statements stay
 * unnamed: a generic plan for its search of partitions is not one to keep.
 */
const KEYED_ENGINE_STATEMENT = /^\s*(SELECT status FROM "[^"]+"\.workflow_status WHERE workflow_uuid=\$1\s*$|SELECT s\.status, o\.function_id IS NOT NULL AS recorded\b|WITH inserted AS \(\s*INSERT INTO "[^"]+"\.workflow_status\b|INSERT INTO "[^"]+"\.workflow_(status|input|output)\b|UPDATE "[^"]+"\.workflow_status SET status=|SELECT output, error, child_workflow_id, function_name, serialization\s+FROM "[^"]+"\.operation_outputs)/;

export function engineStatementNames(): (text: string) => string | undefined {
  const nameOf = createStatementNames();
  return (text) => (KEYED_ENGINE_STATEMENT.test(text) ? nameOf(text) : undefined);
}

/**
 * The engine ends sessions left idle inside a transaction. Left to itself it sets that with a query queued on
 * each new connection, which the driver reports as a deprecated concurrent query; given in the connection
 * string it is part of the session's start-up instead.
 */
function withIdleTransactionTimeout(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const options = url.searchParams.get('options') ?? '';
  if (options.includes('idle_in_transaction_session_timeout')) return databaseUrl;
  url.searchParams.set('options', `${options} -c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_TIMEOUT_MS}`.trim());
  return url.toString();
}

export async function shutdownEngine(): Promise<void> {
  if (DBOS.isInitialized()) await DBOS.shutdown();
  // The engine closes only a pool it made itself.
  await enginePool?.end();
  enginePool = undefined;
}

/**
 * The first half of a graceful shutdown: the process takes no more workflows from the queues, and the ones
 * running here may finish for up to `graceMs`. Those still running afterwards are handed back by the caller.
 */
export async function drainEngine(graceMs: number): Promise<void> {
  const executor = DBOSExecutor.globalInstance;
  if (!executor || !DBOS.isInitialized()) return;
  await executor.deactivateEventReceivers();
  await executor.awaitRunningWorkflows(graceMs);
}

/**
 * True for the engine's sign that this execution of a workflow no longer owns it: another worker took it over
 * (its executor was found dead, or this process handed it back at shutdown). Such an execution must write
 * nothing more: the new owner runs the workflow and records its outcome.
 */
export function isDisplaced(error: unknown): boolean {
  return error instanceof DBOSWorkflowConflictError || (error instanceof Error && error.name === 'DBOSWorkflowConflictError');
}

/**
 * Ends this execution of the running workflow without recording an outcome, as a displaced one ends (isDisplaced):
 * the engine records nothing for it and frees its worker. The workflow stays PENDING under this executor until it
 * is put back on the queue (see findStalledWorkflows) and replayed from its recorded steps.
 */
export function abandonExecution(workflowId: string): never {
  throw new DBOSWorkflowConflictError(workflowId);
}

/** Whether an execution of the workflow runs in this process now (a parked or abandoned one does not). */
export function isRunningHere(workflowId: string): boolean {
  return DBOSExecutor.globalInstance?.systemDatabase.checkForRunningWorkflow(workflowId) ?? false;
}

export async function isEngineHealthy(): Promise<boolean> {
  if (!DBOS.isInitialized()) return false;
  await DBOS.listQueues();
  return true;
}

export type TaskWorkflow = (taskId: string, shape?: number) => Promise<void>;

/**
 * The step sequence new task workflows follow (see workflows/task-workflow.ts). Workflows started before it
 * existed carry no shape, and their recorded steps replay on the step-by-step path they were started on.
 */
export const TASK_WORKFLOW_SHAPE = 2;

export interface TaskStarter {
  /**
   * Starts the task's workflow in this process at once while the direct lane has room (and the tenant is
   * within its part of it); otherwise, and always in a gateway-only process, enqueues it in the tenant's
   * partition. A repeat for the same id is a no-op either way: the engine returns the existing workflow.
   * `submitted`: the row the submission just created, which a workflow started here begins from (takeArrivedRow).
   */
  startTask(taskId: string, tenantId: string, submitted?: TaskRow): Promise<void>;
}

/**
 * The rows of tasks started on arrival in this process, as their submission created them, kept until their
 * workflow takes them or ends: its first step begins from the row instead of reading it again (one round trip
 * fewer before a simple task's first token). Such a row may miss a pause or cancel requested since; the step's
 * opening commit decides on the task row it locks, as it always did.
 */
const arrivedRows = new Map<string, TaskRow>();

/** The row a task's submission handed to its workflow started here, once; undefined after that, or elsewhere. */
export function takeArrivedRow(taskId: string): TaskRow | undefined {
  const row = arrivedRows.get(taskId);
  arrivedRows.delete(taskId);
  return row;
}

export interface WorkerLane { workers: number; perTenant: number }

/**
 * How a process's workers are shared between tasks it starts directly and tasks it takes from the queue. The
 * queue counts only the workflows it handed out, so each lane has its own limits, and their sums are
 * WORKER_CONCURRENCY and the tenant's share: neither a process nor a tenant ever runs more than those, however
 * the lanes fill. The queue keeps at least one worker (it also brings back resumed and recovered work), and
 * all of them in a worker-only process, where no submission arrives to be started directly.
 */
export function workerLanes(role: ProcessRole, workerConcurrency: number, tenantWorkerLimit: number): { direct: WorkerLane; queue: WorkerLane } {
  const direct = role === 'all'
    ? { workers: Math.floor(workerConcurrency / 2), perTenant: Math.floor(tenantWorkerLimit / 2) }
    : { workers: 0, perTenant: 0 };
  return { direct, queue: { workers: workerConcurrency - direct.workers, perTenant: Math.max(1, tenantWorkerLimit - direct.perTenant) } };
}

export interface TaskStarterOptions {
  /** Empty (no workers) in a process that only enqueues. */
  directLane: WorkerLane;
  /** Aborted when the process drains for shutdown: from then on tasks go to the queue, for other workers. */
  stopping: AbortSignal;
  /** Over its memory limit the process starts nothing on arrival either: the task waits in the queue. */
  admission: MemoryAdmission;
  /** The registered task workflow (registered after the starter is built, as the engine's deps need both). */
  workflow: () => TaskWorkflow;
}

/** Starting a workflow directly skips the queue's poll (tens of milliseconds) between a submission and its first step. */
export function createTaskStarter(options: TaskStarterOptions): TaskStarter {
  const { directLane } = options;
  const directByTenant = new Map<string, number>();
  let direct = 0;

  const enqueueTask = async (taskId: string, tenantId: string) => {
    await DBOS.startWorkflow(options.workflow(), { workflowID: taskId, queueName: TASK_QUEUE, enqueueOptions: { queuePartitionKey: tenantId } })(taskId, TASK_WORKFLOW_SHAPE);
  };
  const hasRoomFor = (tenantId: string) => !options.stopping.aborted
    && direct < directLane.workers && options.admission.admits() && (directByTenant.get(tenantId) ?? 0) < directLane.perTenant;
  const countDirect = (tenantId: string, change: number) => {
    direct += change;
    const count = (directByTenant.get(tenantId) ?? 0) + change;
    if (count > 0) directByTenant.set(tenantId, count);
    else directByTenant.delete(tenantId);
  };

  return {
    async startTask(taskId, tenantId, submitted) {
      if (!hasRoomFor(tenantId)) return enqueueTask(taskId, tenantId);
      countDirect(tenantId, 1);
      if (submitted) arrivedRows.set(taskId, submitted);
      const release = () => {
        countDirect(tenantId, -1);
        arrivedRows.delete(taskId);
        startedHere.delete(taskId);
      };
      try {
        const handle = await DBOS.startWorkflow(options.workflow(), { workflowID: taskId })(taskId, TASK_WORKFLOW_SHAPE);
        // Settles when the workflow returns (or, for one that existed already, ends wherever it runs).
        handle.getResult().then(release, release);
      } catch (error) {
        release();
        throw error;
      }
    },
  };
}

/** The state of a task's workflow in the engine (ENQUEUED, PENDING, SUCCESS, …); undefined when it has none. */
export async function taskWorkflowStatus(taskId: string): Promise<string | undefined> {
  return (await DBOS.getWorkflowStatus(taskId))?.status;
}

/** The executor id the engine runs under (the one it stamps on the workflows it dequeues). */
export function engineExecutorId(): string {
  return DBOS.executorID;
}

/**
 * Puts a parked task's workflow back on the queue: its history from `step` on is dropped, so the replay
 * returns the recorded results up to the checkpoint where it parked and runs on from there.
 */
export async function unparkTaskWorkflow(taskId: string, tenantId: string, step: number): Promise<void> {
  await DBOS.rewindWorkflow(taskId, { startStep: step, queueName: TASK_QUEUE, queuePartitionKey: tenantId });
}

/** Creates or upgrades the engine's own tables (schema `dbos`) without launching it. */
export async function migrateEngine(databaseUrl: string): Promise<void> {
  await withEngineSchemaLock(databaseUrl, async (client) => {
    await DBOS.migrate(databaseUrl);
    await fenceClaims(client);
  });
}

/**
 * A queue claim (ENQUEUED to PENDING) by an executor that was taken over (executors.recovered_at) or stopped is
 * skipped, so the engine does not count it claimed and a live worker takes the workflow. A worker frozen past its
 * lease and thawed runs its overdue timers in any order: its queue poll could claim the workflows just handed on
 * from it before its heartbeat found it fenced, and they waited for a second take-over. Installed once the engine's
 * tables exist (after our migrations run); `search_path from current` finds our tables wherever they are.
 */
async function fenceClaims(client: pg.Client): Promise<void> {
  // A database without our tables (the engine alone, in its own tests) has no executors to fence.
  const { rows: [state] } = await client.query<{ executors: boolean; fenced: boolean }>(`select to_regclass('executors') is not null as executors,
    exists (select 1 from pg_trigger where tgname = 'agentgate_refuse_fenced_claim_v1' and tgrelid = 'dbos.workflow_status'::regclass) as fenced`);
  if (!state.executors || state.fenced) return;
  await client.query(`
    create or replace function agentgate_refuse_fenced_claim_v1() returns trigger language plpgsql set search_path from current as $$
    begin
      if exists (select 1 from executors where id = new.executor_id and (recovered_at is not null or stopped_at is not null)) then
        return null;
      end if;
      return new;
    end $$;
    create or replace trigger agentgate_refuse_fenced_claim_v1 before update on dbos.workflow_status
      for each row when (old.status = 'ENQUEUED' and new.status = 'PENDING') execute function agentgate_refuse_fenced_claim_v1()`);
}

/**
 * The engine migrates its schema at launch with no lock of its own: two processes started together on a fresh
 * database raced, and one failed with "deadlock detected" or "tuple concurrently updated". Launches and migrations
 * take turns under a session advisory lock (released when the session ends, also if this process dies); the
 * second finds the schema current and changes nothing. The lock is tried, not waited for: a statement waiting for
 * it holds a snapshot, and the engine's CREATE INDEX CONCURRENTLY waits for every such snapshot to end (a deadlock
 * Postgres does not see).
 */
async function withEngineSchemaLock<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withOwnConnection({ connectionString: databaseUrl, application_name: 'agentgate-engine-schema-lock' }, async (client) => {
    await pRetry(async () => {
      const { rows } = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(hashtextextended('agentgate:engine-schema', 0)) as locked`);
      if (!rows[0].locked) throw new Error('another process is migrating or launching the engine');
    }, { retries: Number.POSITIVE_INFINITY, minTimeout: 50, maxTimeout: 500, maxRetryTime: ENGINE_SCHEMA_LOCK_WAIT_MS });
    // Closing the connection releases the lock.
    return work(client);
  });
}

/** Removes a task that is still queued; a running workflow stops at its own checkpoints instead. */
export async function cancelQueuedWorkflow(taskId: string): Promise<void> {
  const status = await DBOS.getWorkflowStatus(taskId);
  if (status?.status === 'ENQUEUED') await DBOS.cancelWorkflow(taskId);
}

/** The engine's number of the step running now: stable across a re-run of that step after a crash. */
export function currentStepId(): number {
  return DBOS.stepID ?? 0;
}

/** Runs a database read again until the database answers (db/retry.ts, which needs the caller's logger). */
export type WaitForDatabase = <R>(attempt: () => Promise<R>) => Promise<R>;

let ownershipIsCertain: () => boolean = () => false;

/**
 * Tells the steps when no other worker can have taken this process's workflows over (a fresh executor lease, and no
 * hand-over under way: tasks/executor-lease.ts): they then start without asking the engine whether they still own
 * their workflow, one round trip fewer per step.
 */
export function trustOwnershipWhile(certain: () => boolean): void {
  ownershipIsCertain = certain;
}

/**
 * Runs `work` as a durable step: its outcome is recorded, and a replay returns the record instead of running it.
 * A step starts only while this execution still owns its workflow: one displaced by another worker stops at
 * its next step (isDisplaced) instead of calling a model a second time; the engine checks again on recording.
 * That check waits out an unreachable database like the step's own work: an outage is not the step's outcome.
 * It is skipped while ownership is certain (trustOwnershipWhile).
 * An outcome `isOwnRecord` accepts is not recorded by the engine: the step's own commit already holds it (a task
 * that ended), and a replay runs the step again, which finds that out from its rows without redoing any work.
 */
export function runDurableStep<T>(name: string, work: () => Promise<T>, waitForDatabase: WaitForDatabase = (attempt) => attempt(), isOwnRecord?: (outcome: T) => boolean): Promise<T> {
  let unrecorded: string | undefined;
  // Inside a step the engine runs a nested one as plain code, with no check to skip.
  const workflowId = DBOS.isInStep() ? undefined : DBOS.workflowID;
  if (workflowId !== undefined) enteringStep.add(workflowId);
  try {
    return DBOS.runStep(async () => {
      if (!ownershipIsCertain()) await waitForDatabase(() => assertStillOwnsWorkflow(DBOS.workflowID!));
      const outcome = await work();
      if (isOwnRecord?.(outcome)) unrecordedOutcomes.add(unrecorded = `${DBOS.workflowID}:${DBOS.stepID}`);
      return outcome;
    }, { name }).finally(() => unrecorded && unrecordedOutcomes.delete(unrecorded));
  } finally {
    // The engine asks for the cancel check, if at all, synchronously inside runStep: nothing is left to skip later.
    if (workflowId !== undefined) enteringStep.delete(workflowId);
  }
}

/**
 * The engine's system database, as the members a wrapper below replaces: the engine offers no option for what they
 * change, and a later version may have moved any of them (each wrapper checks, and leaves the engine as it is).
 */
function engineSystemDatabase<Members>(): Partial<Members> | undefined {
  return DBOSExecutor.globalInstance?.systemDatabase as unknown as Partial<Members> | undefined;
}

/** Workflows whose step runDurableStep is entering at this moment (inside its synchronous call of runStep). */
const enteringStep = new Set<string>();

type CheckIfCanceled = (workflowId: string) => Promise<void>;

/**
 * Makes the engine skip the first of the two cancel checks it makes on entering a step: it reads the workflow's
 * status, then at once reads it again with the step's record (getOperationResultAndThrowIfCancelled), and throws if
 * either says cancelled. Skipping the first changes no outcome and saves a round trip per step (docs/decisions.md,
 * "One cancel check per step"). Only the check asked for while runDurableStep is entering its step is skipped; the
 * engine's other checks (messages, sleeps, child workflows) are not. False when a later engine version moved it.
 */
function skipRepeatedCancelChecks(): boolean {
  const database = engineSystemDatabase<{ checkIfCanceled: CheckIfCanceled }>();
  const check = database?.checkIfCanceled;
  if (!database || typeof check !== 'function') return false;
  database.checkIfCanceled = (workflowId) => (enteringStep.delete(workflowId) ? Promise.resolve() : check.call(database, workflowId));
  return true;
}

interface WorkflowStart { status: string; queueName?: string; deduplicationID?: string; workflowUUID: string; input?: string | null }
type StartResult = { status: string; shouldExecuteOnThisExecutor: boolean; serialization: string | null };
type StartWorkflow = (start: WorkflowStart, creatorXid: string, reusePolicy: string) => Promise<StartResult>;
type StatementClient = { query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> };
type InsertStatus = (client: StatementClient, start: WorkflowStart, creatorXid: string) => Promise<{ status: string; creator_xid: string; serialization: string | null }>;

/**
 * Makes the engine's start of a workflow that runs here at once (a direct start: PENDING, on no queue) one
 * statement instead of four (BEGIN, the status insert, the input insert, COMMIT), each a round trip on the way to a
 * task's first step: its own status insert, as it builds it, with the input insert joined to it
 * (docs/decisions.md, "Issue 30: a direct start in one statement"). A row that was there already (a repeated
 * start) is left to the engine's own start, which decides what the repeat gets. False when a later engine version
 * moved either method: every start takes four statements, as before.
 */
function startDirectWorkflowsInOneStatement(): boolean {
  const database = engineSystemDatabase<{ initWorkflowStatusStandalone: StartWorkflow; insertWorkflowStatus: InsertStatus; schemaName: unknown }>();
  if (!database || typeof database.initWorkflowStatusStandalone !== 'function' || typeof database.insertWorkflowStatus !== 'function'
    || typeof database.schemaName !== 'string' || !enginePool) return false;
  const startAsEngine = database.initWorkflowStatusStandalone.bind(database);
  const insertStatus = database.insertWorkflowStatus.bind(database);
  const [pool, schema] = [enginePool, database.schemaName];
  database.initWorkflowStatusStandalone = async (start, creatorXid, reusePolicy) => {
    if (start.status !== 'PENDING' || start.queueName || start.deduplicationID || reusePolicy !== 'return-existing') return startAsEngine(start, creatorXid, reusePolicy);
    const row = await withDbRetry(() => insertStatus(insertingInputToo(pool, schema, start, creatorXid), start, creatorXid)).catch((error: unknown) => {
      if (error instanceof UnexpectedEngineStatement) return undefined;
      throw error;
    });
    if (row?.creator_xid !== creatorXid) return startAsEngine(start, creatorXid, reusePolicy);
    startedHere.add(start.workflowUUID);
    return { status: row.status, shouldExecuteOnThisExecutor: true, serialization: row.serialization };
  };
  return true;
}

class UnexpectedEngineStatement extends Error {}

/**
 * Workflows this process has just created (a direct start's row is new), until their first read of a step's record:
 * that read has nothing to find, so it is not sent (readStepRecordsWithStatus). Dropped also when a task's workflow
 * ends without reaching a step (createTaskStarter's release).
 */
const startedHere = new Set<string>();

/** The status insert as the engine sends it, whole, before anything else (its placeholders run from $1, the id). */
const STATUS_INSERT = /^\s*INSERT INTO "[^"]+"\.workflow_status \([\s\S]+\bRETURNING\b[^;]*\bcreator_xid\b[^;]*$/;

/**
 * A client for the engine's status insert that sends it with the workflow's input inserted in the same statement
 * (when the row is this start's), then answers the engine's own input insert, which follows, without sending it.
 * Any other first statement is not sent: the start is then left to the engine (UnexpectedEngineStatement).
 */
function insertingInputToo(pool: pg.Pool, schema: string, start: WorkflowStart, creatorXid: string): StatementClient {
  let statusInserted = false;
  return {
    async query(text, values) {
      if (statusInserted) return { rows: [] };
      if (!STATUS_INSERT.test(text) || values[0] !== start.workflowUUID) throw new UnexpectedEngineStatement(text);
      statusInserted = true;
      const [creator, input] = [values.length + 1, values.length + 2];
      return pool.query(`WITH inserted AS (${text}),
        input AS (INSERT INTO "${schema}".workflow_input (workflow_uuid, inputs) SELECT $1, $${input} FROM inserted WHERE inserted.creator_xid = $${creator}
          ON CONFLICT (workflow_uuid) DO NOTHING)
        SELECT * FROM inserted`, [...values, creatorXid, start.input ?? null]);
    },
  };
}

interface StepRecord { output: string | null; error: string | null; childWorkflowID: string | null; functionName: string | null; serialization: string | null }
type ReadStepRecord = (workflowId: string, functionId: number) => Promise<StepRecord | undefined>;

/**
 * Makes the engine's read before a step (getOperationResultAndThrowIfCancelled: the workflow's status, then the
 * step's earlier record, in two statements one after the other) one statement: one round trip fewer before every
 * step, and one snapshot for both (docs/decisions.md, "Issue 30: a direct start in one statement, and a step's
 * record read with its workflow's status"). Retried on a lost connection as the engine's own read is. The first read
 * of a workflow this process has just created is not sent at all (startedHere): it has no records yet, and a task's
 * cancel is decided on its own row by the step's opening, not by the engine's status. False when a later engine
 * version moved it: the two statements stay, and engine-step-checks.test.ts fails on the count.
 */
function readStepRecordsWithStatus(): boolean {
  const database = engineSystemDatabase<{ getOperationResultAndThrowIfCancelled: ReadStepRecord; schemaName: unknown }>();
  if (!database || typeof database.getOperationResultAndThrowIfCancelled !== 'function' || typeof database.schemaName !== 'string' || !enginePool) return false;
  const pool = enginePool;
  const text = stepRecordRead(database.schemaName);
  database.getOperationResultAndThrowIfCancelled = (workflowId, functionId) => (startedHere.delete(workflowId) ? Promise.resolve(undefined) : withDbRetry(async () => {
    const { rows: [row] } = await pool.query<StepRecordRow>(text, [workflowId, functionId]);
    if (row.status === 'CANCELLED') throw new EngineErrors.DBOSWorkflowCancelledError(workflowId);
    if (!row.recorded) return undefined;
    return { output: row.output, error: row.error, childWorkflowID: row.child_workflow_id, functionName: row.function_name, serialization: row.serialization };
  }));
  return true;
}

type StepRecordRow = { status: string | null; recorded: boolean; output: string | null; error: string | null; child_workflow_id: string | null; function_name: string | null; serialization: string | null };

/** Always one row: the workflow's status (null without a row) beside the step's record, if it has one. */
const stepRecordRead = (schema: string) => `SELECT s.status, o.function_id IS NOT NULL AS recorded, o.output, o.error, o.child_workflow_id, o.function_name, o.serialization
  FROM (SELECT $1::text AS workflow_uuid) w
  LEFT JOIN "${schema}".workflow_status s ON s.workflow_uuid = w.workflow_uuid
  LEFT JOIN "${schema}".operation_outputs o ON o.workflow_uuid = w.workflow_uuid AND o.function_id = $2`;

/** Steps (`workflow id:step id`) that returned an outcome the engine is not to record (runDurableStep's `isOwnRecord`). */
const unrecordedOutcomes = new Set<string>();

type RecordOperationResult = (workflowId: string, functionId: number, ...rest: unknown[]) => Promise<void>;

/**
 * Makes the engine skip the record of a step in `unrecordedOutcomes`: one write transaction and one round trip
 * less per simple task (docs/decisions.md, issue 30: one step record fewer). The engine has no option for a step
 * it need not record, so this wraps its system database's recording; false when a later engine version moved it
 * (every step is then recorded, as before; the test of the simple task's records fails).
 */
function leaveOwnRecordsUnrecorded(): boolean {
  const database = engineSystemDatabase<{ recordOperationResult: RecordOperationResult }>();
  const record = database?.recordOperationResult;
  if (!database || typeof record !== 'function') return false;
  database.recordOperationResult = (workflowId, functionId, ...rest) =>
    (unrecordedOutcomes.delete(`${workflowId}:${functionId}`) ? Promise.resolve() : record.call(database, workflowId, functionId, ...rest));
  return true;
}

/** Registers a durable workflow under `name`; every workflow must be registered before the engine launches. */
export function registerDurableWorkflow<Args extends unknown[], R = void>(name: string, body: (...args: Args) => Promise<R>): (...args: Args) => Promise<R> {
  return DBOS.registerWorkflow(body, { name });
}

/** What the engine recorded of a task's workflow: its status and its steps in order. */
export async function workflowRecord(taskId: string) {
  const [status, steps] = await Promise.all([DBOS.getWorkflowStatus(taskId), DBOS.listWorkflowSteps(taskId)]);
  return { status, steps: steps ?? [] };
}

/** Whether the code runs inside a durable step (where a wait may park the task: the step runs again on the wake). */
export function isInsideStep(): boolean {
  return DBOS.isInStep();
}

/** The id of the workflow running here (a task's is the task id); undefined outside a workflow. */
export function currentWorkflowId(): string | undefined {
  return DBOS.workflowID;
}

/** Waits inside a workflow; the wake-up time is recorded, so a workflow recovered after a crash sleeps only what is left. */
export async function sleepDurably(ms: number): Promise<void> {
  await DBOS.sleep(ms);
}

/**
 * Puts a workflow on the background queue under `workflowId`, for any worker; a start repeated under the same id is
 * a no-op (the engine returns the existing workflow). A crash of the worker running it resumes it from its recorded
 * steps: at that worker's restart, or on another worker once it counts as dead.
 */
export async function enqueueBackgroundWorkflow<Args extends unknown[]>(workflow: (...args: Args) => Promise<unknown>, workflowId: string, ...args: Args): Promise<void> {
  await DBOS.startWorkflow(workflow, { workflowID: workflowId, queueName: BACKGROUND_QUEUE })(...args);
}
