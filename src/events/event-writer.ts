import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { NewTaskEvent } from './append-event.ts';
import type { GroupCommitter } from './group-commit.ts';

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
  /**
   * Waits until every event so far is stored and hands over the buffered token text (an LLM_PARTIAL, keyed
   * like the others) instead of writing it: the caller appends it first in its own transaction, which saves
   * a commit when the step ends with one anyway.
   */
  takeBuffered(): Promise<NewTaskEvent[]>;
}

export interface EventWriterOptions {
  db: Db;
  taskId: string;
  /** Identifies the emitting step; stable across a re-run of that step after a crash. */
  stepKey: string;
  partialIntervalMs: number;
  /** Every LLM_PARTIAL's payload, e.g. `final_answer: true` for the agent whose output is the answer; the text is its message. */
  partialMarks?: Record<string, unknown>;
  /**
   * Write the first delta at once, for the time to first token of a text someone waits for (the answer);
   * otherwise it is coalesced like the rest, and a short text goes out with the step's last commit.
   */
  firstDeltaAtOnce?: boolean;
  /**
   * Given the first delta (with `firstDeltaAtOnce`) as it is queued, before it commits: a stream of this process
   * that cannot resume (the OpenAI layer) shows it at once.
   */
  previewFirstDelta?: (text: string) => void;
  /** The process's group committer: it writes the appends of all tasks together and wakes their followers. */
  appends: GroupCommitter;
  /** No earlier run of the step can have written token text (its task had not started): nothing to look up and skip. */
  isFirstRun?: boolean;
}

/**
 * Writes a step's events in order. A step re-run after a crash must not record anything twice:
 * ordinary events are keyed by the step and their position, and token deltas by their character
 * offset in the answer, with the characters already recorded by the earlier run skipped. A
 * deterministic model therefore continues its stream exactly where the crash cut it.
 */
export async function openEventWriter(options: EventWriterOptions): Promise<EventWriter> {
  const { db, appends, taskId, stepKey, partialIntervalMs, partialMarks, firstDeltaAtOnce = true, previewFirstDelta } = options;
  let alreadyRecordedChars = options.isFirstRun ? 0 : await recordedPartialChars(db, taskId, stepKey);
  let position = 0;
  let offset = 0;
  let chain: Promise<void> = Promise.resolve();
  /** The first write that failed for good; the step sees it at its next emit or flush. */
  let failure: unknown;
  let buffered = '';
  let bufferedAgent = '';
  let timer: NodeJS.Timeout | undefined;

  // Writes run one after another (so they commit in order) and never reject: token deltas are flushed from
  // a timer that nobody awaits, so a failure is kept for the step to see instead of escaping as an unhandled
  // rejection. Every event carries a dedupe key, so an append retried after a lost connection is recorded once.
  const enqueue = (events: NewTaskEvent[]) => {
    chain = chain.then(async () => {
      if (failure !== undefined) return;
      try {
        await appends.append(taskId, events);
      } catch (error) {
        failure = error;
      }
    });
    return chain;
  };
  const settled = async () => {
    await chain;
    if (failure !== undefined) throw failure;
  };
  const takePartial = (): NewTaskEvent[] => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffered === '') return [];
    const delta = buffered;
    buffered = '';
    const event = { type: 'LLM_PARTIAL', agentId: bufferedAgent, message: delta, payload: { ...partialMarks }, dedupeKey: `${stepKey}:p${offset}` };
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
      void enqueue([...takePartial(), ...keyed]);
      await settled();
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
      // The first delta of an answer goes out at once (time to first token); later ones are coalesced.
      if (offset === 0 && firstDeltaAtOnce) {
        previewFirstDelta?.(buffered);
        flushPartial();
      } else timer ??= setTimeout(flushPartial, partialIntervalMs);
    },
    async flush() {
      flushPartial();
      await settled();
    },
    async takeBuffered() {
      // Taken first, so that no timer writes it meanwhile.
      const partial = takePartial();
      await settled();
      return partial;
    },
  };
}

async function recordedPartialChars(db: Db, taskId: string, stepKey: string): Promise<number> {
  const { rows } = await sql<{ chars: number }>`
    select coalesce(sum(length(message)), 0)::int as chars from task_events
    where task_id = ${taskId} and type = 'LLM_PARTIAL' and dedupe_key like ${`${stepKey}:p%`}`.execute(db);
  return rows[0].chars;
}
