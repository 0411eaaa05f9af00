import type pg from 'pg';
import { percentile } from '../submit/percentile.ts';
import type { TimedRequest } from './closed-loop.ts';

/** Where a streamed request's time to first token goes, from the task's own timestamps; ms per percentile. */
export interface Segment {
  name: string;
  p50: number;
  p90: number;
  p99: number;
}

interface TaskTimes {
  query: string;
  created_ms: number;
  started_ms: number;
  prompt_ms: number;
  partial_ms: number;
}

/**
 * Splits each request's TTFT at the task's database timestamps. They are Postgres `now()`, the start of
 * the writing transaction, on the same clock as the client's send time: the task row (`created_at`),
 * the workflow's start (`started_at`), the LLM_PROMPT event written just before the model is called,
 * and the first LLM_PARTIAL (the first token, after the event writer's coalescing interval).
 */
export async function breakDownLatency(pool: pg.Pool, requests: TimedRequest[]): Promise<Segment[]> {
  const { rows } = await pool.query<TaskTimes>(`
    select t.query,
      (extract(epoch from t.created_at) * 1000)::float8 as created_ms,
      (extract(epoch from t.started_at) * 1000)::float8 as started_ms,
      (select (extract(epoch from min(e.created_at)) * 1000)::float8 from task_events e where e.task_id = t.id and e.type = 'LLM_PROMPT') as prompt_ms,
      (select (extract(epoch from min(e.created_at)) * 1000)::float8 from task_events e where e.task_id = t.id and e.type = 'LLM_PARTIAL') as partial_ms
    from tasks t where t.query = any($1)`, [requests.map((request) => request.query)]);
  const byQuery = new Map(rows.map((row) => [row.query, row]));
  // Only requests that got their first token have every timestamp (the others are counted as errors).
  const timed = requests.flatMap((request) => {
    const task = byQuery.get(request.query);
    return task && request.firstTokenMs !== undefined ? [{ request, firstTokenMs: request.firstTokenMs, task }] : [];
  });
  const segment = (name: string, measure: (entry: (typeof timed)[number]) => number): Segment => {
    const sorted = timed.map(measure).sort((left, right) => left - right);
    return { name, p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99) };
  };
  return [
    segment('request sent → task row written (HTTP, auth, chat session lookup)', ({ request, task }) => task.created_ms - request.sentAtMs),
    segment('task row → task started (commit; a direct start, or the DBOS queue\'s poll and dequeue beyond the direct lane; the start transaction)', ({ task }) => task.started_ms - task.created_ms),
    segment('task started → LLM_PROMPT (since issue 13 both in the one start transaction: 0)', ({ task }) => task.prompt_ms - task.started_ms),
    segment('LLM_PROMPT → first LLM_PARTIAL written (the mock\'s first token, then the group commit of the first delta)', ({ task }) => task.partial_ms - task.prompt_ms),
    segment('first LLM_PARTIAL → first content chunk at the client (the chunk is sent as the delta\'s write is queued, so this is below 0 when it arrives before the write begins)', ({ request, firstTokenMs, task }) => request.sentAtMs + firstTokenMs - task.partial_ms),
  ];
}
