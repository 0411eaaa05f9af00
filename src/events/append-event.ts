import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

export interface NewTaskEvent {
  type: string;
  agentId?: string;
  message?: string;
  payload?: Record<string, unknown>;
  /** Stable per emission site, so a step re-run after a crash does not record the event twice. */
  dedupeKey?: string;
}

/** The spec's task event record (2.9, 6.1). */
export interface TaskEvent {
  workflow_id: string;
  type: string;
  agent_id: string | null;
  message: string | null;
  payload: Record<string, unknown> | null;
  timestamp: string;
  seq: number;
  stream_id: string;
}

interface TaskEventRow {
  task_id: string;
  seq: number;
  stream_id: string;
  type: string;
  agent_id: string | null;
  message: string | null;
  payload: Record<string, unknown> | null;
  created_at: Date;
}

/** Writes events to Postgres (the record) and returns them as stored; nothing is seen before this commits. */
export async function appendTaskEvents(db: Db, taskId: string, events: NewTaskEvent[]): Promise<TaskEvent[]> {
  if (events.length === 0) return [];
  const batch = events.map((event) => ({
    type: event.type,
    agent_id: event.agentId ?? null,
    message: event.message ?? null,
    payload: event.payload ?? null,
    dedupe_key: event.dedupeKey ?? null,
  }));
  const { rows } = await sql<TaskEventRow>`
    select * from append_task_events(${taskId}::uuid, ${JSON.stringify(batch)}::jsonb, ${Date.now()}::bigint)`.execute(db);
  return rows.map(toTaskEvent);
}

export function toTaskEvent(row: TaskEventRow): TaskEvent {
  return {
    workflow_id: row.task_id,
    type: row.type,
    agent_id: row.agent_id,
    message: row.message,
    payload: row.payload,
    timestamp: row.created_at.toISOString(),
    seq: row.seq,
    stream_id: row.stream_id,
  };
}
