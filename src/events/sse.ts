import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { whenAborted } from '../http/when-aborted.ts';

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

export interface SseOptions {
  pingIntervalMs: number;
  /** Buffered bytes beyond which a consumer counts as too slow. */
  bufferLimitBytes: number;
  /** How long a full buffer may wait to drain before the consumer is cut off. */
  drainGraceMs?: number;
  pingComment?: string;
  /** Aborted when the server shuts down: the stream ends and the client reconnects with its last event id. */
  stopping?: AbortSignal;
  /** The last frame at shutdown, naming where to resume (a native stream; the OpenAI format cannot resume). */
  shutdownFrame?: () => SseFrame;
}

export interface SseStream {
  /** Aborted when the client goes away or the stream ends. */
  signal: AbortSignal;
  /** Writes a frame; false when the consumer stayed more than the buffer limit behind. */
  send(frame: SseFrame): Promise<boolean>;
  /**
   * Writes frames encoded once for every stream (encodeChunk of formatFrame), in one socket write (one per wake-up
   * of a stream, not one per event); as `send` otherwise, but answers at once unless the buffer must drain.
   */
  sendEncoded(frames: readonly EncodedChunk[]): boolean | Promise<boolean>;
  comment(text: string): void;
  end(): void;
}

/**
 * Why a stream's signal aborts, made once: an abort without a reason makes a DOMException and its stack trace, a
 * cost that 5,000 streams ending with their task paid together.
 */
const STREAM_ENDED = new DOMException('the stream ended', 'AbortError');

/**
 * The one way we serve Server-Sent Events (STYLE.md §8): keep the headers hooks already set (CORS,
 * request id), hijack the reply, write frames with back-pressure, ping, and stop on disconnect.
 */
export function openSse(request: FastifyRequest, reply: FastifyReply, options: SseOptions): SseStream {
  const raw = reply.raw;
  const socket = request.raw.socket;
  const controller = new AbortController();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value);
  reply.hijack();
  // A stream may stay quiet between pings longer than ordinary requests may (spec 8 timeouts).
  socket.setTimeout(0);
  raw.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  const ping = setInterval(() => writeText(`: ${options.pingComment ?? 'ping'}\n\n`), options.pingIntervalMs);
  // Assigned below: a signal already aborted calls onShutdown, and so stop, inside whenAborted itself.
  let stopWatching = () => {};
  const stop = () => {
    clearInterval(ping);
    stopWatching();
    controller.abort(STREAM_ENDED);
  };
  // At shutdown the connection ends too: the server waits for every socket to close, and a kept-alive one
  // would hold the shutdown until its keep-alive timeout.
  const onShutdown = () => {
    if (options.shutdownFrame) writeText(formatFrame(options.shutdownFrame()));
    writeText(': server shutting down; reconnect with Last-Event-ID\n\n');
    stop();
    if (!raw.writableEnded) raw.end();
    socket.end();
  };
  if (options.stopping) stopWatching = whenAborted(options.stopping, onShutdown);
  socket.once('close', stop);
  raw.once('close', stop);

  // Straight to the socket, not through `raw.write`: the response corks its socket until the next tick, so
  // when one event wakes a thousand streams in one turn, no stream's bytes would leave before the last
  // stream's turn had run. Written here, each leaves as its stream writes it, in one syscall, as bytes
  // encoded once for all the streams that write them.
  function bytesOf(encoded: EncodedChunk): Buffer {
    return raw.chunkedEncoding ? encoded.chunk : encoded.bytes;
  }
  function write(frames: readonly EncodedChunk[]): boolean {
    if (raw.writableEnded || raw.destroyed || socket.writableEnded) return false;
    if (frames.length === 1) {
      socket.write(bytesOf(frames[0]));
      return true;
    }
    // Corked, the frames leave in one writev of the shared bytes: joined, each stream would copy them.
    socket.cork();
    for (const frame of frames) socket.write(bytesOf(frame));
    socket.uncork();
    return true;
  }
  function writeText(text: string): boolean {
    return write([encodeChunk(text)]);
  }

  /** Synchronous while the consumer keeps up: a promise only when its buffer passed the limit and must drain. */
  function writeWithinLimit(frames: readonly EncodedChunk[]): boolean | Promise<boolean> {
    if (!write(frames)) return false;
    if (socket.writableLength <= options.bufferLimitBytes) return true;
    return waitForDrain();
  }
  async function waitForDrain(): Promise<boolean> {
    await Promise.race([once(socket, 'drain'), sleep(options.drainGraceMs ?? 1_000, undefined, { signal: controller.signal })]).catch(() => {});
    return socket.writableLength <= options.bufferLimitBytes;
  }

  return {
    signal: controller.signal,
    send: async (frame) => writeWithinLimit([encodeChunk(formatFrame(frame))]),
    sendEncoded: writeWithinLimit,
    comment(text) {
      writeText(`: ${text}\n\n`);
    },
    end() {
      stop();
      if (!raw.writableEnded) raw.end();
    },
  };
}

/** Text encoded once for any number of streams, chunked or not. */
export interface EncodedChunk {
  /** The text as one chunk of HTTP/1.1's chunked transfer coding (RFC 9112 §7.1): size in hex, CRLF, the bytes, CRLF. */
  chunk: Buffer;
  /** The bytes alone (a view into `chunk`), for a response that is not chunked (an HTTP/1.0 client's). */
  bytes: Buffer;
}

/** Never of empty text: an empty chunk would end the body (`raw.end()` writes that one). */
export function encodeChunk(text: string): EncodedChunk {
  if (text.length === 0) throw new Error('an SSE write is never empty');
  const size = Buffer.byteLength(text);
  const head = `${size.toString(16)}\r\n`;
  const chunk = Buffer.allocUnsafe(head.length + size + 2);
  chunk.write(head, 0, 'latin1');
  chunk.write(text, head.length, 'utf8');
  chunk.write('\r\n', head.length + size, 'latin1');
  return { chunk, bytes: chunk.subarray(head.length, head.length + size) };
}

export function formatFrame(frame: SseFrame): string {
  let text = '';
  if (frame.id !== undefined) text += `id: ${frame.id}\n`;
  if (frame.event !== undefined) text += `event: ${frame.event}\n`;
  for (const line of frame.data.split('\n')) text += `data: ${line}\n`;
  return `${text}\n`;
}
