import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { countTasks, type CompletionSample } from '../submit/task-completions.ts';

const SAMPLE_INTERVAL_MS = 500;

export interface RunSample extends CompletionSample {
  /** Connections the run's processes hold on its database now. */
  connections: number;
}

/**
 * Samples the run's progress and connections every 500 ms, from now until every task of the database is done
 * (none queued or running) or `timeoutMs` passes; `onSample` sees each sample as it is taken.
 */
export async function followRun(pool: pg.Pool, timeoutMs: number, onSample: (sample: RunSample) => Promise<void>): Promise<RunSample[]> {
  const deadline = Date.now() + timeoutMs;
  const samples: RunSample[] = [];
  for (;;) {
    const [progress, connections] = await Promise.all([countTasks(pool, new Date(0)), countConnections(pool)]);
    const sample = { ...progress, connections };
    samples.push(sample);
    await onSample(sample);
    if (progress.unfinished === 0 || Date.now() >= deadline) return samples;
    await sleep(SAMPLE_INTERVAL_MS);
  }
}

/** The gateway's pool and LISTEN connection, and the engine's pool, of every process on this database. */
export async function countConnections(pool: pg.Pool): Promise<number> {
  const { rows: [row] } = await pool.query<{ count: number }>(`
    select count(*)::int as count from pg_stat_activity
    where datname = current_database() and (application_name like 'agentgate%' or application_name like 'dbos\\_transact\\_%')`);
  return row.count;
}
