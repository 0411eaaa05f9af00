import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import net from 'node:net';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { encodeChunk, formatFrame, openSse, type SseStream } from '../../src/events/sse.ts';
import { parseSseText } from '../helpers/sse-client.ts';

test('formatFrame writes id, event and one data line per line of data', () => {
  assert.equal(formatFrame({ id: '1-0', event: 'x', data: 'a\nb' }), 'id: 1-0\nevent: x\ndata: a\ndata: b\n\n');
  assert.equal(formatFrame({ data: '[DONE]' }), 'data: [DONE]\n\n');
});

test('a consumer that stops reading is cut off with a final error frame once the buffer limit is passed', async (t) => {
  const app = Fastify();
  let framesSent = 0;
  app.get('/stream', async (request, reply) => {
    const sse = openSse(request, reply, { pingIntervalMs: 60_000, bufferLimitBytes: 256 * 1024, drainGraceMs: 200 });
    const payload = 'x'.repeat(10_000);
    for (let id = 1; id <= 5_000; id += 1) {
      framesSent = id;
      if (!await sse.send({ id: String(id), event: 'chunk', data: payload })) {
        await sse.send({ event: 'error', data: JSON.stringify({ code: 'consumer_too_slow', last_event_id: String(id) }) });
        break;
      }
    }
    sse.end();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const socket = net.connect((app.server.address() as net.AddressInfo).port, '127.0.0.1');
  socket.write('GET /stream HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  socket.pause();
  await sleep(1_500);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.resume();
  await new Promise((resolve) => socket.on('close', resolve));
  const text = Buffer.concat(chunks).toString('utf8');
  const frames = parseSseText(dechunk(text.slice(text.indexOf('\r\n\r\n') + 4)));
  const last = frames.at(-1)!;
  assert.equal(last.event, 'error');
  assert.equal(JSON.parse(last.data).code, 'consumer_too_slow');
  assert.ok(framesSent < 5_000, `cut off after ${framesSent} frames instead of buffering all of them`);
  const ids = frames.filter((frame) => frame.event === 'chunk').map((frame) => Number(frame.id));
  assert.deepEqual(ids, ids.map((_, index) => index + 1), 'everything before the cut-off arrived, in order');
  assert.equal(JSON.parse(last.data).last_event_id, String(ids.at(-1)), 'the error names the last delivered id to resume from');
});

/** A Fastify app whose one SSE route runs `serve` on the stream, listening on a free port. */
async function sseApp(t: TestContext, serve: (sse: SseStream, socket: net.Socket) => Promise<void> | void): Promise<number> {
  const app = Fastify();
  app.get('/stream', async (request, reply) => {
    const sse = openSse(request, reply, { pingIntervalMs: 60_000, bufferLimitBytes: 256 * 1024 });
    await serve(sse, request.raw.socket);
    sse.end();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return (app.server.address() as net.AddressInfo).port;
}

/** The whole response to a raw request, as text: headers, then the body as it came over the wire. */
async function rawResponse(port: number, requestText: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  // A response that never ends fails its test instead of holding it.
  socket.setTimeout(5_000, () => socket.destroy());
  socket.write(requestText);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => socket.on('close', resolve));
  return Buffer.concat(chunks).toString('utf8');
}

test('a frame is handed to the socket in the turn it is sent, not at the next tick', async (t) => {
  // Streams woken together by one event are written in one turn: a frame held back to the next tick would
  // wait for every other stream's turn before leaving.
  const pending: number[] = [];
  const port = await sseApp(t, async (sse, socket) => {
    for (const id of ['1', '2', '3']) {
      void sse.send({ id, event: 'x', data: 'ü'.repeat(100) });
      pending.push(socket.writableLength);
    }
    void sse.sendEncoded([encodeChunk('id: 4\ndata: four\n\n'), encodeChunk('id: 5\ndata: five\n\n')]);
    pending.push(socket.writableLength);
  });
  const response = await rawResponse(port, 'GET /stream HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  assert.deepEqual(pending, [0, 0, 0, 0], 'nothing left buffered in the process after each send');
  const body = response.slice(response.indexOf('\r\n\r\n') + 4);
  assert.match(response, /transfer-encoding: chunked/i);
  assert.ok(body.endsWith('0\r\n\r\n'), 'the body ends with the last chunk');
  assert.deepEqual(parseSseText(dechunk(body)).map((frame) => [frame.id, frame.data]),
    [['1', 'ü'.repeat(100)], ['2', 'ü'.repeat(100)], ['3', 'ü'.repeat(100)], ['4', 'four'], ['5', 'five']]);
});

test('an HTTP/1.0 client gets the frames unframed, its body ended by the connection closing', async (t) => {
  const port = await sseApp(t, async (sse) => {
    await sse.send({ id: '1', event: 'x', data: 'one' });
    sse.comment('between');
    await sse.send({ id: '2', event: 'x', data: 'two' });
    await sse.sendEncoded([encodeChunk('id: 3\ndata: three\n\n'), encodeChunk('id: 4\ndata: four\n\n')]);
  });
  const response = await rawResponse(port, 'GET /stream HTTP/1.0\r\nHost: localhost\r\n\r\n');
  assert.doesNotMatch(response, /transfer-encoding/i);
  assert.equal(response.slice(response.indexOf('\r\n\r\n') + 4),
    'id: 1\nevent: x\ndata: one\n\n: between\n\nid: 2\nevent: x\ndata: two\n\nid: 3\ndata: three\n\nid: 4\ndata: four\n\n');
});

test('a chunked body read by fetch joins to the frames exactly, multi-byte characters included', async (t) => {
  const data = ['plain', 'ü€😀'.repeat(500), JSON.stringify({ text: 'line\nbreak' })];
  const port = await sseApp(t, async (sse) => {
    for (const [index, text] of data.entries()) await sse.send({ id: String(index), data: text });
  });
  const response = await fetch(`http://127.0.0.1:${port}/stream`);
  assert.deepEqual(parseSseText(await response.text()).map((frame) => frame.data), data);
});

test('a stream opened while the server is stopping gets the shutdown frame and is closed', async (t) => {
  const app = Fastify({ forceCloseConnections: true });
  app.get('/stream', async (request, reply) => {
    const sse = openSse(request, reply, {
      pingIntervalMs: 60_000, bufferLimitBytes: 1024, stopping: AbortSignal.abort(),
      shutdownFrame: () => ({ id: '7', event: 'error', data: '{"code":"shutting_down"}' }),
    });
    assert.ok(sse.signal.aborted, 'the stream is over at once');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const response = await rawResponse((app.server.address() as net.AddressInfo).port, 'GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n');
  assert.match(response, /^HTTP\/1\.1 200/);
  assert.equal(dechunk(response.slice(response.indexOf('\r\n\r\n') + 4)),
    'id: 7\nevent: error\ndata: {"code":"shutting_down"}\n\n: server shutting down; reconnect with Last-Event-ID\n\n');
});

test('streams share one listener on the shutdown signal, and each open stream gets the shutdown frame', async (t) => {
  // A listener per stream made every open and close look through all the others' (EventTarget skips duplicates).
  const stopping = new AbortController();
  const app = Fastify({ forceCloseConnections: true });
  let opened = 0;
  app.get('/stream', async (request, reply) => {
    const sse = openSse(request, reply, { pingIntervalMs: 60_000, bufferLimitBytes: 1024, stopping: stopping.signal });
    opened += 1;
    if (request.query && (request.query as { end?: string }).end) sse.end();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const port = (app.server.address() as net.AddressInfo).port;
  const ended = await rawResponse(port, 'GET /stream?end=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  const open = [1, 2, 3].map(() => rawResponse(port, 'GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n'));
  const deadline = Date.now() + 5_000;
  while (opened < 4 && Date.now() < deadline) await sleep(10);
  assert.equal(opened, 4);
  assert.ok(getEventListeners(stopping.signal, 'abort').length <= 1, `${getEventListeners(stopping.signal, 'abort').length} listeners for 3 open streams`);
  stopping.abort();
  for (const response of await Promise.all(open)) {
    assert.equal(dechunk(response.slice(response.indexOf('\r\n\r\n') + 4)), ': server shutting down; reconnect with Last-Event-ID\n\n');
  }
  assert.doesNotMatch(ended, /shutting down/, 'a stream that had ended is left alone');
});

/** The payload of a chunked body, checking each chunk's size line against its bytes. */
function dechunk(body: string): string {
  const bytes = Buffer.from(body, 'utf8');
  let payload = '';
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    const size = Number.parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16);
    if (size === 0) return payload;
    payload += bytes.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
    assert.equal(bytes.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString('latin1'), '\r\n', 'a chunk is exactly its size');
    offset = lineEnd + 4 + size;
  }
}
