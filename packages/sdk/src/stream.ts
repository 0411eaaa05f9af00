import { EventSourceParserStream } from 'eventsource-parser/stream';
import { AuthenticationError, ConnectionError, errorFromFailedResponse, type AgentgateError } from './errors.ts';
import type { TaskEvent } from './events.ts';
import { delay } from './transport.ts';

export interface StreamOptions {
  /** Aborts the stream; the iteration then throws the signal's reason. */
  signal?: AbortSignal;
  /** Only these event types (the stream still ends at the task's end). */
  types?: string[];
  /** Start after this event: a seq number or a stream id (`<ms>-<n>`); default: from the first event. */
  after?: number | string;
  /** How long to keep trying to reconnect while the server cannot be reached before giving up (ms, default 300 000). */
  reconnectForMs?: number;
  /** Called before each reconnection, with the seq it resumes after and the reason. */
  onReconnect?: (info: { afterSeq: number | string; attempt: number; reason: unknown }) => void;
}

export interface StreamTransport {
  /** Opens the SSE stream after the given resume point; resolves with the answer (any status). */
  open(taskId: string, after: number | string, types: string[] | undefined, signal: AbortSignal | undefined): Promise<Response>;
  /** Whether the task has ended (for a stream that closes with nothing more to say). */
  isTerminal(taskId: string, signal: AbortSignal | undefined): Promise<boolean>;
}

/** A frame the server sends about the stream itself (shutdown, too slow, revoked credential), not a task event. */
interface ControlFrame { code?: string; message?: string }

/** 4xx answers to opening a stream that another try cannot fix. */
const isFinal = (error: AgentgateError) => error.status >= 400 && error.status < 500 && error.status !== 429 && error.status !== 408;

/**
 * The task's events, in order, each once, until the task's stream ends. A dropped connection, a server restart
 * or the server's own "reconnect" notice is followed by a new connection resuming after the last event received
 * (Last-Event-ID by seq; events at or before it that the server sends again are skipped), with backoff.
 */
export async function* followTask(transport: StreamTransport, taskId: string, options: StreamOptions = {}): AsyncGenerator<TaskEvent, void, undefined> {
  const { signal } = options;
  let after: number | string = options.after ?? 0;
  let lastSeq = typeof after === 'number' ? after : 0;
  let attempt = 0;
  let quietSince = Date.now();
  const giveUpAfterMs = options.reconnectForMs ?? 300_000;
  for (;;) {
    signal?.throwIfAborted();
    let reason: unknown;
    let received = false;
    let closedByServer = false;
    try {
      const response = await transport.open(taskId, after, options.types, signal);
      if (!response.ok) {
        const error = await errorFromFailedResponse(response);
        if (isFinal(error)) throw error;
        reason = error;
      } else {
        // Reachable: a server closing quiet streams after its inactivity timeout is not a lost stream.
        quietSince = Date.now();
        for await (const frame of frames(response, signal)) {
          if (frame.event === 'done') return;
          const data = parse(frame.data);
          if (!isTaskEvent(data)) {
            if ((data as ControlFrame | undefined)?.code === 'credential_revoked') {
              throw new AuthenticationError((data as ControlFrame).message ?? 'credential revoked', { status: 401, code: 'credential_revoked', body: data });
            }
            reason = data ?? frame.data;
            continue;
          }
          if (data.seq <= lastSeq) continue;
          lastSeq = data.seq;
          after = data.seq;
          received = true;
          attempt = 0;
          quietSince = Date.now();
          yield data;
          if (data.type === 'STREAM_END') return;
        }
        closedByServer = reason === undefined;
        reason ??= 'the server closed the stream';
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof AuthenticationError || (isAgentgateError(error) && isFinal(error))) throw error;
      reason = error;
    }
    // A stream the server closes at once with nothing new is one whose end lies before our resume point.
    if (closedByServer && !received && await transport.isTerminal(taskId, signal).catch(() => false)) return;
    if (Date.now() - quietSince > giveUpAfterMs) {
      throw new ConnectionError(`the event stream of task ${taskId} could not be resumed for ${giveUpAfterMs} ms`, { status: 0, code: 'stream_lost', cause: reason });
    }
    attempt += 1;
    options.onReconnect?.({ afterSeq: after, attempt, reason });
    await delay(Math.min(5_000, 100 * 2 ** Math.min(attempt - 1, 6)) * (1 + Math.random() / 2), signal);
  }
}

async function* frames(response: Response, signal: AbortSignal | undefined) {
  if (!response.body) return;
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  const reader = events.getReader();
  const cancel = () => { void reader.cancel().catch(() => {}); };
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}

function parse(data: string): unknown {
  try { return JSON.parse(data); } catch { return undefined; }
}

function isTaskEvent(value: unknown): value is TaskEvent {
  const event = value as TaskEvent | undefined;
  return typeof event?.seq === 'number' && typeof event.stream_id === 'string' && typeof event.type === 'string';
}

function isAgentgateError(error: unknown): error is AgentgateError {
  return typeof (error as AgentgateError)?.status === 'number' && typeof (error as AgentgateError)?.code === 'string';
}
