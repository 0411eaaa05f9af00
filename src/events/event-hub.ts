import pg from 'pg';
import type { Logger } from 'pino';
import type { TaskEvent } from './append-event.ts';
import { serverStream } from '../db/server-stream.ts';

export const EVENTS_CHANNEL = 'agentgate_task_events';
const RECONNECT_DELAY_MS = 1_000;
/** A line of an event append's notification: the task id and its last seq (migration 0037). Any other line is a bare key. */
const TASK_NOTICE = /^([0-9a-f-]{36}) (\d+)$/;

/**
 * Called when new events of a task may exist: with `committed`, the events this process has just committed, in
 * seq order; with `lastSeq`, the task's last seq as its notification named it.
 */
export type OnWake = (committed?: readonly TaskEvent[], lastSeq?: number) => void;

export interface EventHub {
  /** Calls `onWake` whenever new events of the task may exist; returns the unsubscribe function. */
  subscribe(taskId: string, onWake: OnWake): () => void;
  /**
   * Wakes local subscribers at once (an append in this process need not wait for its NOTIFY), with the events it
   * committed when the caller has them: a follower already at the seq before them takes them without reading the log.
   */
  wake(taskId: string, committed?: readonly TaskEvent[]): void;
  /**
   * Marks an append of this process to the task as under way, until the returned function is called (after its
   * hand-over by `wake`, or its failure). Its own NOTIFY, which often arrives before the hand-over, is held back
   * meanwhile (with any other process's), so that followers are not sent to read what the hand-over brings; what
   * the hand-over did not bring is announced when the last append under way ends.
   */
  appending(taskId: string): () => void;
  /**
   * Hands the first token text of a task's answer to this process's previewers of the task as its append is
   * queued, before it commits (the OpenAI layer's first token: see docs/decisions.md). Its stored event follows as usual.
   */
  preview(taskId: string, text: string): void;
  /** Calls `onPreview` with each preview of the task's answer (preview); returns the unsubscribe function. */
  subscribePreviews(taskId: string, onPreview: (text: string) => void): () => void;
  close(): Promise<void>;
}

/**
 * One LISTEN connection per process turns Postgres notifications into wake-ups of the subscribers of a
 * task (or of any other key notified on the channel, such as an idempotency scope). Notifications only say "look again": subscribers read the log after their own cursor, so the
 * database stays the single record and nothing depends on a notification arriving.
 */
export async function createEventHub(connectionString: string, logger: Logger): Promise<EventHub> {
  const subscribers = new Map<string, Set<OnWake>>();
  let client: pg.Client | undefined;
  let closed = false;

  const wake = (taskId: string, committed?: readonly TaskEvent[], lastSeq?: number) => {
    for (const onWake of subscribers.get(taskId) ?? []) onWake(committed, lastSeq);
  };
  const appendsUnderWay = new Map<string, number>();
  /** The highest seq notified for a task while appends of this process to it were under way. */
  const heldSeqs = new Map<string, number>();
  const wakeNotified = (line: string) => {
    const notice = TASK_NOTICE.exec(line);
    if (!notice) {
      if (line) wake(line);
      return;
    }
    const [, taskId, seq] = notice;
    if (appendsUnderWay.has(taskId)) heldSeqs.set(taskId, Math.max(heldSeqs.get(taskId) ?? 0, Number(seq)));
    else wake(taskId, undefined, Number(seq));
  };
  const appending = (taskId: string) => {
    appendsUnderWay.set(taskId, (appendsUnderWay.get(taskId) ?? 0) + 1);
    let isDone = false;
    return () => {
      if (isDone) return;
      isDone = true;
      const left = appendsUnderWay.get(taskId)! - 1;
      if (left > 0) {
        appendsUnderWay.set(taskId, left);
        return;
      }
      appendsUnderWay.delete(taskId);
      const held = heldSeqs.get(taskId);
      if (held === undefined) return;
      heldSeqs.delete(taskId);
      wake(taskId, undefined, held);
    };
  };
  const wakeAll = () => { for (const taskId of subscribers.keys()) wake(taskId); };
  const previewers = new Map<string, Set<(text: string) => void>>();

  let reconnectTimer: NodeJS.Timeout | undefined;
  const reconnectSoon = () => {
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect().catch(() => {});
    }, RECONNECT_DELAY_MS).unref();
  };

  // One connection at a time: a connection lost is reported once, however many ways it says so (a failed LISTEN,
  // then its closed socket as an 'error'), and only then is the next one made. Each report used to start a
  // reconnect of its own, so a connection cut at the wrong moment left two listening, and so on at every cut.
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString, stream: serverStream, application_name: 'agentgate-events' });
    let isLost = false;
    const lose = (error: unknown, message: string) => {
      if (isLost) return;
      isLost = true;
      if (client === next) client = undefined;
      next.end().catch(() => {});
      if (closed) return;
      logger.warn({ err: error }, message);
      reconnectSoon();
    };
    // A grouped event write notifies once for all its tasks, one a line (migrations 0014 and 0037).
    next.on('notification', (message) => { for (const line of message.payload?.split('\n') ?? []) wakeNotified(line); });
    next.on('error', (error) => lose(error, 'event listener connection lost; reconnecting'));
    try {
      await next.connect();
      await next.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      lose(error, 'event listener could not connect; retrying');
      return;
    }
    if (isLost) return;
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    // Whatever was notified while we were away is found by re-reading.
    wakeAll();
  };
  await connect();

  return {
    subscribe: (taskId, onWake) => addListener(subscribers, taskId, onWake),
    wake,
    appending,
    preview(taskId, text) {
      for (const onPreview of previewers.get(taskId) ?? []) onPreview(text);
    },
    subscribePreviews: (taskId, onPreview) => addListener(previewers, taskId, onPreview),
    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      await client?.end().catch(() => {});
    },
  };
}

/** Adds a listener of a key; returns its removal, which forgets the key with its last listener. */
function addListener<Listener>(listeners: Map<string, Set<Listener>>, key: string, listener: Listener): () => void {
  let set = listeners.get(key);
  if (!set) listeners.set(key, set = new Set());
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) listeners.delete(key);
  };
}

export interface WakeListener {
  /** Resolves at once if woken since the last call; otherwise at the next wake-up or after `timeoutMs`. */
  next(timeoutMs: number): Promise<void>;
  stop(): void;
}

/**
 * Wake-ups of one key, remembered between waits, so one that arrives while the listener is busy (reading
 * what the last one announced) is not lost. Callers still look again after the timeout: a notification may be lost.
 */
export function listenForWakes(hub: EventHub, key: string): WakeListener {
  let woken = false;
  let release: (() => void) | undefined;
  const unsubscribe = hub.subscribe(key, () => {
    woken = true;
    release?.();
  });
  return {
    next(timeoutMs) {
      if (woken) {
        woken = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          release = undefined;
          woken = false;
          resolve();
        }
        release = done;
      });
    },
    stop: unsubscribe,
  };
}
