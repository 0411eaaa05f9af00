import { createParser } from 'eventsource-parser';
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

export interface SseReadOptions {
  headers?: Record<string, string>;
  /** Stop (disconnect) after this many event frames. */
  maxEvents?: number;
  timeoutMs?: number;
  /** Called once the server has answered with the event stream's headers. */
  onOpen?: () => void;
}

export interface SseResult {
  status: number;
  headers: Headers;
  messages: SseMessage[];
  comments: string[];
  /** True when the server closed the stream (rather than us disconnecting). */
  closedByServer: boolean;
  body?: unknown;
}

/** Reads an SSE response with fetch, frame by frame, as a browser EventSource would. */
export async function readSse(url: string, options: SseReadOptions = {}): Promise<SseResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 30_000);
  const response = await fetch(url, { headers: options.headers, signal: controller.signal });
  const result: SseResult = { status: response.status, headers: response.headers, messages: [], comments: [], closedByServer: false };
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    result.body = await response.json().catch(() => undefined);
    clearTimeout(timer);
    return result;
  }
  options.onOpen?.();
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let enough = false;
  const parser = createSseParser(result, (count) => {
    enough = options.maxEvents !== undefined && count >= options.maxEvents;
    return enough;
  });
  try {
    while (!enough) {
      const { value, done } = await reader.read();
      if (done) {
        result.closedByServer = true;
        break;
      }
      parser.feed(value);
    }
    if (enough) controller.abort();
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return result;
}

/** Parses a whole event-stream text, as written to a socket. */
export function parseSseText(text: string): SseMessage[] {
  const parsed = { messages: [] as SseMessage[], comments: [] as string[] };
  createSseParser(parsed, () => false).feed(text);
  return parsed.messages;
}

/** Frames and comments go into `into`; `full(count)` says when to stop collecting frames. */
function createSseParser(into: { messages: SseMessage[]; comments: string[] }, full: (count: number) => boolean) {
  let stopped = false;
  return createParser({
    onEvent: (event) => {
      if (stopped) return;
      into.messages.push({ id: event.id, event: event.event, data: event.data });
      stopped = full(into.messages.length);
    },
    onComment: (comment) => { into.comments.push(comment.trim()); },
  });
}

/** The seq of a frame (`done` carries none in its data, so it is looked up by id by the caller). */
export function seqOf(message: SseMessage): number | undefined {
  if (message.data === '[DONE]') return undefined;
  return JSON.parse(message.data).seq;
}
