import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { appendTaskEvents, type NewTaskEvent } from './append-event.ts';
import type { EventHub } from './event-hub.ts';

export interface EventWriter {
  /**
   * Appends the events, after any buffered token text, in one commit and waits until every event so far is
   * stored. An event without a dedupe key gets the next positional key of the step.
   */
  emit(events: NewTaskEvent[]): Promise<void>;
  /** Buffers a token delta; buffered text goes out as one LLM_PARTIAL per interval. */
  partial(agentId: string, delta: string): void;
  /** Writes whatever is buffered and waits until every event so far is stored. */
  flush(): Promise<void>;
}

export interface EventWriterOptions {
  db: Db;
  hub?: EventHub;
  taskId: string;
  /** Identifies the emitting step; stable across a re-run of that step after a crash. */
  stepKey: string;
  partialIntervalMs: number;
  /** Added to every LLM_PARTIAL payload, e.g. `final_answer: true` for the agent whose output is the answer. */
  partialMarks?: Record<string, unknown>;
}

/**
 * Writes a step's events in order. A step re-run after a crash must not record anything twice:
 * ordinary events are keyed by the step and their position, and token deltas by their character
 * offset in the answer, with the characters already recorded by the earlier run skipped. A
 * deterministic model therefore continues its stream exactly where the crash cut it.
 */
export async function openEventWriter(options: EventWriterOptions): Promise<EventWriter> {
  const { db, hub, taskId, stepKey, partialIntervalMs, partialMarks } = options;
  let alreadyRecordedChars = await recordedPartialChars(db, taskId, stepKey);
  let position = 0;
  let offset = 0;
  let chain: Promise<unknown> = Promise.resolve();
  let buffered = '';
  let bufferedAgent = '';
  let timer: NodeJS.Timeout | undefined;

  const enqueue = (events: NewTaskEvent[]) => {
    chain = chain.then(async () => {
      const stored = await appendTaskEvents(db, taskId, events);
      if (stored.length > 0) hub?.wake(taskId);
    });
    return chain;
  };
  const takePartial = (): NewTaskEvent[] => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffered === '') return [];
    const delta = buffered;
    buffered = '';
    const event = { type: 'LLM_PARTIAL', agentId: bufferedAgent, message: delta, payload: { delta, ...partialMarks }, dedupeKey: `${stepKey}:p${offset}` };
    offset += delta.length;
    return [event];
  };
  const flushPartial = () => {
    const partial = takePartial();
    if (partial.length > 0) void enqueue(partial);
  };

  return {
    async emit(events) {
      const keyed = events.map((event) => (event.dedupeKey ? event : { ...event, dedupeKey: `${stepKey}:e${position++}` }));
      await enqueue([...takePartial(), ...keyed]);
    },
    partial(agentId, delta) {
      if (alreadyRecordedChars > 0) {
        const skipped = Math.min(alreadyRecordedChars, delta.length);
        alreadyRecordedChars -= skipped;
        offset += skipped;
        delta = delta.slice(skipped);
        if (delta === '') return;
      }
      if (bufferedAgent !== agentId) flushPartial();
      bufferedAgent = agentId;
      buffered += delta;
      // The first delta goes out at once (time to first token); later ones are coalesced.
      timer ??= setTimeout(flushPartial, offset === 0 ? 0 : partialIntervalMs);
    },
    async flush() {
      flushPartial();
      await chain;
    },
  };
}

async function recordedPartialChars(db: Db, taskId: string, stepKey: string): Promise<number> {
  const { rows } = await sql<{ chars: number }>`
    select coalesce(sum(length(message)), 0)::int as chars from task_events
    where task_id = ${taskId} and type = 'LLM_PARTIAL' and dedupe_key like ${`${stepKey}:p%`}`.execute(db);
  return rows[0].chars;
}
