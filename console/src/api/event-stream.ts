import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { credentialHeaders, loadCredential, type Credential } from './credentials';
import { refreshAccessToken } from './client';
import type { TaskEvent } from './task-event';

export type { TaskEvent };

export interface StreamHandlers {
  onEvent(event: TaskEvent): void;
  onEnd(): void;
  onState(state: 'connecting' | 'live' | 'reconnecting' | 'ended' | 'not found'): void;
}

const RETRY_MS = [500, 1000, 2000, 4000];

/**
 * Follows a task's SSE stream with fetch, not EventSource: EventSource cannot send the Authorization header
 * (the gateway takes a key in the query string but not an access token). After a drop it reconnects with
 * Last-Event-ID set to the last id seen, so the server replays exactly the events that were missed.
 */
export function followTask(taskId: string, handlers: StreamHandlers): () => void {
  const stop = new AbortController();
  let lastEventId: string | undefined;
  let attempt = 0;

  const connect = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      handlers.onState(attempt === 0 ? 'connecting' : 'reconnecting');
      try {
        const ended = await readOnce();
        if (ended) return;
      } catch (error) {
        if (stop.signal.aborted) return;
        if (error instanceof StreamRefused && error.status >= 400 && error.status < 500 && error.status !== 429) {
          if (error.status === 401 && await refreshAccessToken(error.sentWith)) continue;
          handlers.onState(error.status === 404 ? 'not found' : 'ended');
          return;
        }
        // A dropped connection, a server restarting (503) or busy (429): try again, resuming after the last id.
      }
      await delay(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)], stop.signal);
      attempt += 1;
    }
  };

  const readOnce = async (): Promise<boolean> => {
    const sentWith = loadCredential();
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...credentialHeaders(sentWith) };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    const response = await fetch(`/api/v1/stream/sse?workflow_id=${encodeURIComponent(taskId)}`, { headers, signal: stop.signal });
    if (!response.ok || !response.body) throw new StreamRefused(response.status, sentWith);
    handlers.onState('live');
    attempt = 0;
    let ended = false;
    const parser = createParser({
      onEvent(message: EventSourceMessage) {
        if (message.event === 'done') {
          ended = true;
          return;
        }
        if (message.id) lastEventId = message.id;
        try {
          handlers.onEvent(JSON.parse(message.data) as TaskEvent);
        } catch {
          // A frame that is not a task event (none today) is not worth breaking the stream for.
        }
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
      if (ended) break;
    }
    if (ended) {
      handlers.onState('ended');
      handlers.onEnd();
    }
    return ended;
  };

  void connect();
  return () => stop.abort();
}

class StreamRefused extends Error {
  readonly status: number;
  /** The credential the refused request carried. */
  readonly sentWith: Credential | null;
  constructor(status: number, sentWith: Credential | null) {
    super(`stream refused: ${status}`);
    this.status = status;
    this.sentWith = sentWith;
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}
