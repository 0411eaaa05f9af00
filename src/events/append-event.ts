import { sql, type OperationNodeSource } from 'kysely';
import type { Db } from '../db/database.ts';
import { storableJsonText } from '../db/storable-text.ts';
import { eventAppendDuration } from '../observability/metrics.ts';

const singleAppendDuration = eventAppendDuration.labels('in_transaction');

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

/** A write whose result nobody reads, made in the statement that appends the events (a CTE), a round trip fewer. */
export type AlongsideWrite = OperationNodeSource & { execute(): Promise<unknown> };

/**
 * Writes events to Postgres (the record) and returns them as stored; nothing is seen before this commits.
 * `alongside` writes go in the same statement; without events, each is a statement of its own.
 */
export async function appendTaskEvents(db: Db, taskId: string, events: NewTaskEvent[], alongside: AlongsideWrite[] = []): Promise<TaskEvent[]> {
  if (events.length === 0) {
    for (const write of alongside) await write.execute();
    return [];
  }
  const startedAt = performance.now();
  const writes = alongside.length === 0 ? sql`` : sql`with ${sql.join(alongside.map((write, index) => sql`${sql.raw(`alongside_${index}`)} as (${write})`))} `;
  const { rows } = await sql<TaskEventRow>`
    ${writes}select * from append_task_events(${taskId}::uuid, ${storableJsonText(events.map(toEventRecord))}::jsonb, ${Date.now()}::bigint)`.execute(db);
  singleAppendDuration.observe((performance.now() - startedAt) / 1000);
  return rows.map(toTaskEvent);
}

/** The events one caller appends to one task. */
export interface TaskAppend {
  taskId: string;
  events: NewTaskEvent[];
}

/**
 * Writes the appends of many tasks in one transaction with one notification, each task's events in order
 * (migration 0014), and returns what each append stored. Fails as a whole if any append fails.
 * `asyncPartials`: a batch of token deltas only commits without waiting for the WAL flush.
 */
export async function appendTaskEventBatch(db: Db, appends: TaskAppend[], options: { asyncPartials: boolean }): Promise<TaskEvent[][]> {
  const entries = appends.map((append) => ({ task_id: append.taskId, events: append.events.map(toEventRecord) }));
  const { rows } = await sql<TaskEventRow & { entry: number }>`
    select * from append_task_event_batch(${storableJsonText(entries)}::jsonb, ${Date.now()}::bigint, ${options.asyncPartials})`.execute(db);
  const stored = appends.map((): TaskEvent[] => []);
  for (const row of rows) stored[row.entry].push(toTaskEvent(row));
  return stored;
}

function toEventRecord(event: NewTaskEvent) {
  return {
    type: event.type,
    agent_id: event.agentId ?? null,
    message: event.message ?? null,
    payload: event.payload ?? null,
    dedupe_key: event.dedupeKey ?? null,
  };
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
