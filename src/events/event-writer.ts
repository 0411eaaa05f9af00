import type { Db } from '../db/database.ts';
import { appendTaskEvents, type NewTaskEvent } from './append-event.ts';

/** Token deltas are coalesced into one LLM_PARTIAL at most this often (DESIGN.md "Events"). */
export const PARTIAL_INTERVAL_MS = 50;

export interface EventWriter {
  emit(event: Omit<NewTaskEvent, 'dedupeKey'>): Promise<void>;
  /** Buffers a token delta; buffered text goes out as one LLM_PARTIAL per interval. */
  partial(agentId: string, delta: string): void;
  /** Writes whatever is buffered and waits until every event so far is stored. */
  flush(): Promise<void>;
}

/**
 * Writes a step's events in order. Each event's dedupe key is the step's key plus its position, so a
 * step that re-runs after a crash re-emits the same keys and the log keeps one copy.
 */
export function createEventWriter(db: Db, taskId: string, stepKey: string): EventWriter {
  let position = 0;
  let chain: Promise<unknown> = Promise.resolve();
  let buffered = '';
  let bufferedAgent = '';
  let timer: NodeJS.Timeout | undefined;

  const enqueue = (events: NewTaskEvent[]) => {
    chain = chain.then(() => appendTaskEvents(db, taskId, events));
    return chain;
  };
  const keyed = (event: Omit<NewTaskEvent, 'dedupeKey'>): NewTaskEvent => ({ ...event, dedupeKey: `${stepKey}:${position++}` });
  const flushPartial = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffered === '') return;
    const delta = buffered;
    buffered = '';
    void enqueue([keyed({ type: 'LLM_PARTIAL', agentId: bufferedAgent, message: delta, payload: { delta } })]);
  };

  return {
    async emit(event) {
      flushPartial();
      await enqueue([keyed(event)]);
    },
    partial(agentId, delta) {
      if (bufferedAgent !== agentId) flushPartial();
      bufferedAgent = agentId;
      buffered += delta;
      timer ??= setTimeout(flushPartial, PARTIAL_INTERVAL_MS);
    },
    async flush() {
      flushPartial();
      await chain;
    },
  };
}
