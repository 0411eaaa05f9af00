import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

const SAMPLE_INTERVAL_MS = 20;
const QUERY_PREFIX_CHARS = 140;

export interface ActivitySampler {
  /** Stops sampling and returns the most frequent (state, wait, statement) lines, most frequent first. */
  stop(): Promise<string[]>;
}

/**
 * Samples pg_stat_activity every 20 ms: where the non-idle backends of the database are and what they run.
 * A poor man's profile of Postgres, for a server without pg_stat_statements. Opt-in (BENCH_SAMPLE_ACTIVITY=1).
 */
export async function startActivitySampler(databaseUrl: string, top: number): Promise<ActivitySampler> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // The gateway may stop its Postgres under us (Ctrl-C); the sampler's next query fails and says so.
  client.on('error', () => {});
  await client.connect();
  const counts = new Map<string, number>();
  let samples = 0;
  let isRunning = true;
  const sampling = (async () => {
    while (isRunning) {
      for (const line of await sampleActivity(client)) counts.set(line, (counts.get(line) ?? 0) + 1);
      samples += 1;
      await sleep(SAMPLE_INTERVAL_MS);
    }
  })();
  return {
    async stop() {
      isRunning = false;
      await sampling;
      await client.end();
      return [...counts].sort((left, right) => right[1] - left[1]).slice(0, top)
        .map(([line, count]) => `${(count / samples).toFixed(2).padStart(6)} backends | ${line}`);
    },
  };
}

async function sampleActivity(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ line: string }>(`
    select state || ' | ' || coalesce(wait_event_type || ':' || wait_event, 'CPU') || ' | '
           || regexp_replace(left(query, $1), '\\s+', ' ', 'g') as line
    from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`, [QUERY_PREFIX_CHARS]);
  return rows.map((row) => row.line);
}

const ACTIVITY_LINES = 15;

/** Opt-in (BENCH_SAMPLE_ACTIVITY=1): a sampler of what Postgres's backends are doing, to print per phase. */
export async function sampleActivityIfAsked(databaseUrl: string): Promise<ActivitySampler | undefined> {
  return process.env.BENCH_SAMPLE_ACTIVITY === '1' ? startActivitySampler(databaseUrl, ACTIVITY_LINES) : undefined;
}

export async function logActivity(log: (message: string) => void, phase: string, sampler: ActivitySampler | undefined): Promise<void> {
  if (!sampler) return;
  log(`Postgres activity ${phase} (mean number of backends per state | wait | statement):\n${(await sampler.stop()).join('\n')}`);
}
