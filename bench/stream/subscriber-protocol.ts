import { createHistogram, performance } from 'node:perf_hooks';
import type { RecordableHistogram } from 'node:perf_hooks';

/** What a subscriber worker is given: the gateway (or broadcaster) to connect to and its share of the streams. */
export interface WorkerSetup {
  host: string;
  port: number;
  headers: Record<string, string>;
  /** One request path per stream. */
  paths: string[];
  openConcurrency: number;
}

export type ParentMessage = { type: 'window'; startMs: number } | { type: 'stop' };

export interface OpenedMessage {
  type: 'opened';
  opened: number;
  failed: number;
  statusCounts: Record<string, number>;
  openMs: number;
}

export interface FinishedMessage {
  type: 'finished';
  stats: StreamStats;
  /** Commit → receipt, in microseconds, of the events committed inside the window. */
  latency: RecordableHistogram;
  /** The same, by kind of event: the partial deltas, the completion frames, the rest. */
  latencyByKind: Record<EventKind, RecordableHistogram>;
}

export const EVENT_KINDS = ['delta', 'completed', 'other'] as const;
export type EventKind = typeof EVENT_KINDS[number];

export function eventKind(eventName: string | undefined): EventKind {
  if (eventName === 'thread.message.delta') return 'delta';
  if (eventName === 'thread.message.completed') return 'completed';
  return 'other';
}

/** Microseconds, up to 10 minutes. */
export const newLatencyHistogram = (): RecordableHistogram => createHistogram({ lowest: 1, highest: 600_000_000, figures: 3 });

export const newLatencyByKind = (): Record<EventKind, RecordableHistogram> =>
  Object.fromEntries(EVENT_KINDS.map((kind) => [kind, newLatencyHistogram()])) as Record<EventKind, RecordableHistogram>;

export type WorkerMessage = OpenedMessage | FinishedMessage;

export interface StreamStats {
  /** Events committed at or after the window's start and received (STREAM_END's `done` excluded). */
  events: number;
  /** Events committed before the window (replayed on connect): not in the latency. */
  eventsBeforeWindow: number;
  /** Sum of the `data` lengths of the window's events. */
  dataBytes: number;
  /** Wall-clock ms of the last window event received. */
  lastReceivedMs: number;
  /** Streams that received `done`. */
  completedStreams: number;
  failedOpens: number;
  statusCounts: Record<string, number>;
  /** `error` events (e.g. consumer_too_slow). */
  errorEvents: number;
  /** A seq that did not follow the previous one on its stream. */
  gaps: number;
  connectionErrors: number;
  /** The first few connection error messages. */
  errorSample: string[];
}

export function newStreamStats(): StreamStats {
  return {
    events: 0, eventsBeforeWindow: 0, dataBytes: 0, lastReceivedMs: 0, completedStreams: 0,
    failedOpens: 0, statusCounts: {}, errorEvents: 0, gaps: 0, connectionErrors: 0, errorSample: [],
  };
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable with the server's event timestamps. */
export const nowMs = () => performance.timeOrigin + performance.now();
