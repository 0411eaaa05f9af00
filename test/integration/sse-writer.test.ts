import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { formatFrame, openSse } from '../../src/events/sse.ts';
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
  const frames = parseSseText(text.replace(/\r\n[0-9a-f]+\r\n/g, ''));
  const last = frames.at(-1)!;
  assert.equal(last.event, 'error');
  assert.equal(JSON.parse(last.data).code, 'consumer_too_slow');
  assert.ok(framesSent < 5_000, `cut off after ${framesSent} frames instead of buffering all of them`);
  const ids = frames.filter((frame) => frame.event === 'chunk').map((frame) => Number(frame.id));
  assert.deepEqual(ids, ids.map((_, index) => index + 1), 'everything before the cut-off arrived, in order');
  assert.equal(JSON.parse(last.data).last_event_id, String(ids.at(-1)), 'the error names the last delivered id to resume from');
});
