import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';

const POLL_INTERVAL_MS = 500;

export interface CompletionSample {
  atMs: number;
  submitted: number;
  completed: number;
  unfinished: number;
}

export interface DrainOptions {
  /** Tasks created at or after this instant are the run's. */
  since: Date;
  isLoadDone: () => boolean;
  /** How long to keep waiting for unfinished tasks once the load has stopped. */
  capAfterLoadMs: number;
}

/**
 * Polls the run's task counts from the start of the load until every task it submitted is terminal
 * (twice in a row, so a submission still in flight when the load stopped is seen) or the cap passes.
 */
export async function pollUntilDrained(pool: pg.Pool, options: DrainOptions): Promise<{ samples: CompletionSample[]; isDrained: boolean }> {
  const samples: CompletionSample[] = [];
  let deadline = Number.POSITIVE_INFINITY;
  let idleSamples = 0;
  for (;;) {
    const sample = await countTasks(pool, options.since);
    samples.push(sample);
    if (options.isLoadDone()) {
      deadline = Math.min(deadline, Date.now() + options.capAfterLoadMs);
      idleSamples = sample.unfinished === 0 ? idleSamples + 1 : 0;
      if (idleSamples >= 2) return { samples, isDrained: true };
      if (Date.now() >= deadline) return { samples, isDrained: false };
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

/** Waits until no task is queued or running (after a warm-up, a backlog...), or throws after `timeoutMs`. */
export async function waitUntilIdle(pool: pg.Pool, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await countTasks(pool, new Date(0))).unfinished > 0) {
    if (Date.now() >= deadline) throw new Error(`tasks still unfinished after ${timeoutMs} ms`);
    await sleep(POLL_INTERVAL_MS);
  }
}

/** The tasks created at or after `since`: how many, how many completed, how many still queued or running. */
export async function countTasks(pool: pg.Pool, since: Date): Promise<CompletionSample> {
  const { rows } = await pool.query<Omit<CompletionSample, 'atMs'>>(`
    select count(*)::int as submitted,
           count(*) filter (where status = 'COMPLETED')::int as completed,
           count(*) filter (where status in ('QUEUED', 'RUNNING'))::int as unfinished
    from tasks where created_at >= $1`, [since]);
  return { atMs: Date.now(), ...rows[0] };
}

export interface CompletionSummary {
  submitted: number;
  completed: number;
  /** Tasks that ended in another final status (FAILED, CANCELLED, TIMEOUT...). */
  failed: number;
  /** completed / (last completed_at − first created_at). */
  completedPerSecond: number;
  /** Tasks completed while the load ran, per second of the load. */
  completedPerSecondDuringLoad: number;
  /** From the first task created to the last one completed. */
  drainSeconds: number;
  /** completed_at − created_at of the completed tasks, in ms. */
  latency: { p50: number; p99: number; max: number };
  /** started_at − created_at (waiting in the queue) and completed_at − started_at (running), p50 in ms. */
  queueWaitP50: number;
  executionP50: number;
  executionP99: number;
}

/** Everything is computed from the tasks table, on Postgres's clock. */
export async function summarizeCompletions(pool: pg.Pool, loadStart: Date, loadEnd: Date): Promise<CompletionSummary> {
  const { rows: [row] } = await pool.query(`
    with run as (
      select status, created_at, completed_at,
             extract(epoch from completed_at - created_at) * 1000 as latency_ms,
             extract(epoch from started_at - created_at) * 1000 as wait_ms,
             extract(epoch from completed_at - started_at) * 1000 as execution_ms
      from tasks where created_at >= $1)
    select count(*)::int as submitted,
           count(*) filter (where status = 'COMPLETED')::int as completed,
           count(*) filter (where status not in ('COMPLETED', 'QUEUED', 'RUNNING'))::int as failed,
           count(*) filter (where status = 'COMPLETED' and completed_at <= $2)::int as completed_during_load,
           extract(epoch from max(completed_at) filter (where status = 'COMPLETED') - min(created_at))::float8 as drain_seconds,
           percentile_disc(0.5) within group (order by latency_ms) filter (where status = 'COMPLETED')::float8 as p50,
           percentile_disc(0.99) within group (order by latency_ms) filter (where status = 'COMPLETED')::float8 as p99,
           max(latency_ms) filter (where status = 'COMPLETED')::float8 as max,
           percentile_disc(0.5) within group (order by wait_ms) filter (where status = 'COMPLETED')::float8 as wait_p50,
           percentile_disc(0.5) within group (order by execution_ms) filter (where status = 'COMPLETED')::float8 as execution_p50,
           percentile_disc(0.99) within group (order by execution_ms) filter (where status = 'COMPLETED')::float8 as execution_p99
    from run`, [loadStart, loadEnd]);
  const loadSeconds = (loadEnd.getTime() - loadStart.getTime()) / 1000;
  return {
    submitted: row.submitted,
    completed: row.completed,
    failed: row.failed,
    completedPerSecond: row.drain_seconds > 0 ? row.completed / row.drain_seconds : Number.NaN,
    completedPerSecondDuringLoad: row.completed_during_load / loadSeconds,
    drainSeconds: row.drain_seconds ?? Number.NaN,
    latency: { p50: row.p50 ?? Number.NaN, p99: row.p99 ?? Number.NaN, max: row.max ?? Number.NaN },
    queueWaitP50: row.wait_p50 ?? Number.NaN,
    executionP50: row.execution_p50 ?? Number.NaN,
    executionP99: row.execution_p99 ?? Number.NaN,
  };
}
