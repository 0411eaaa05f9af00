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
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        result.closedByServer = true;
        break;
      }
      buffer += value;
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const message = parseBlock(block, result.comments);
        if (!message) continue;
        result.messages.push(message);
        if (options.maxEvents !== undefined && result.messages.length >= options.maxEvents) {
          controller.abort();
          return result;
        }
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return result;
}

export function parseBlock(block: string, comments: string[] = []): SseMessage | undefined {
  const message: SseMessage = { data: '' };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) comments.push(line.slice(1).trim());
    else if (line.startsWith('id: ')) message.id = line.slice(4);
    else if (line.startsWith('event: ')) message.event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length === 0 && message.event === undefined) return undefined;
  message.data = data.join('\n');
  return message;
}

/** The seq of a frame (`done` carries none in its data, so it is looked up by id by the caller). */
export function seqOf(message: SseMessage): number | undefined {
  if (message.data === '[DONE]') return undefined;
  return JSON.parse(message.data).seq;
}
