import pTimeout from 'p-timeout';
import type { Logger } from 'pino';
import type { PoolUse } from '../db/connect.ts';
import type { Db } from '../db/database.ts';
import { engineExecutorId, TASK_QUEUE } from '../engine/engine.ts';
import { WAIT_KINDS } from '../task-state/waits.ts';
import {
  databasePoolConnections, databasePoolMax, databasePoolWaiting, metrics, metricsReadFailures, queueDepth, queueOldestWait, queueWait, tasks, taskWaits,
} from './metrics.ts';
import { countOpenWaits, countUnfinishedTasks, readDequeuedWorkflows, readQueueBacklogs, type DequeueCursor } from './scrape-reads.ts';

export interface MetricsExposition {
  contentType: string;
  /** Reads the values known only at scrape time (database counts, the pool), then renders every metric. */
  render(): Promise<string>;
}

export interface ExpositionOptions {
  db: Db;
  poolUse: () => PoolUse;
  logger: Logger;
}

/** A scrape answers in time even when the database is frozen (Prometheus gives up after 10 s by default). */
const READ_TIMEOUT_MS = 1_500;
/** Dequeued workflows observed per scrape at most; the rest are observed at the next one. */
const DEQUEUED_PER_SCRAPE = 5_000;

type ReadName = 'tasks' | 'waits' | 'queues' | 'queue_wait';

/**
 * Scrape-time values are read only when a scrape asks (no timer), once for scrapes that arrive together.
 * A read that fails or times out is counted and its gauges are left out of that scrape; the rest is served.
 * A read still running from an earlier scrape (a frozen database) is not started again, so scrapes never
 * hold more than one connection per read.
 */
export function createMetricsExposition(options: ExpositionOptions): MetricsExposition {
  const { db, logger } = options;
  // Dequeues before this process started were observed (or not) by its previous life.
  let cursor: DequeueCursor = { startedAtMs: Date.now(), workflowId: '' };
  let refreshing: Promise<void> | undefined;
  const running = new Set<ReadName>();

  const read = async <T>(name: ReadName, work: () => Promise<T>): Promise<T | undefined> => {
    if (running.has(name)) return failed(name, new Error('the previous read has not answered yet'));
    running.add(name);
    const attempt = work().finally(() => running.delete(name));
    try {
      return await pTimeout(attempt, { milliseconds: READ_TIMEOUT_MS, message: `no answer within ${READ_TIMEOUT_MS} ms` });
    } catch (error) {
      return failed(name, error);
    }
  };
  const failed = (name: ReadName, error: unknown): undefined => {
    metricsReadFailures.inc({ read: name });
    logger.warn({ err: error, read: name }, 'a metrics read failed; the scrape leaves its values out');
    return undefined;
  };

  const refreshTasks = async () => {
    const counts = await read('tasks', () => countUnfinishedTasks(db));
    tasks.reset();
    for (const row of counts ?? []) tasks.set({ status: row.status, mode: row.mode }, row.count);
  };
  const refreshWaits = async () => {
    const counts = await read('waits', () => countOpenWaits(db));
    taskWaits.reset();
    if (!counts) return;
    for (const wait of WAIT_KINDS) taskWaits.set({ wait }, 0);
    for (const row of counts) taskWaits.set({ wait: row.wait }, row.count);
  };
  const refreshQueues = async () => {
    const backlogs = await read('queues', () => readQueueBacklogs(db));
    queueDepth.reset();
    queueOldestWait.reset();
    if (!backlogs) return;
    queueDepth.set({ queue: TASK_QUEUE }, 0);
    queueOldestWait.set({ queue: TASK_QUEUE }, 0);
    for (const backlog of backlogs) {
      queueDepth.set({ queue: backlog.queue }, backlog.depth);
      queueOldestWait.set({ queue: backlog.queue }, backlog.oldestWaitMs / 1000);
    }
  };
  const observeQueueWaits = async () => {
    // The waits observed here are those of the workflows this process's engine dequeued.
    const dequeued = await read('queue_wait', () => readDequeuedWorkflows(db, engineExecutorId(), cursor, DEQUEUED_PER_SCRAPE));
    for (const workflow of dequeued ?? []) queueWait.observe({ queue: workflow.queue }, workflow.waitMs / 1000);
    const last = dequeued?.at(-1);
    if (last) cursor = { startedAtMs: last.startedAtMs, workflowId: last.workflowId };
  };
  const refreshPool = () => {
    const pool = options.poolUse();
    databasePoolConnections.set({ state: 'idle' }, pool.idle);
    databasePoolConnections.set({ state: 'busy' }, pool.total - pool.idle);
    databasePoolWaiting.set(pool.waiting);
    databasePoolMax.set(pool.max);
  };
  const refresh = async () => {
    refreshPool();
    await Promise.all([refreshTasks(), refreshWaits(), refreshQueues(), observeQueueWaits()]);
  };

  return {
    contentType: metrics.contentType,
    async render() {
      refreshing ??= refresh().finally(() => { refreshing = undefined; });
      await refreshing;
      return metrics.metrics();
    },
  };
}
