import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskEvent } from '../../../src/events/append-event.ts';
import { encodeChunk, formatFrame } from '../../../src/events/sse.ts';
import { encodedSseFrame, toSseFrame } from '../../../src/events/sse-names.ts';

const event = (seq: number, type: string, message: string | null): TaskEvent => ({
  workflow_id: 'task-1', type, agent_id: null, message, payload: null, timestamp: new Date(0).toISOString(), seq, stream_id: `0-${seq}`,
});

test('an event\'s encoded frame is its formatted frame, encoded once for every stream that writes it', () => {
  const partial = event(1, 'LLM_PARTIAL', 'Hel\nlo');
  const end = event(2, 'STREAM_END', null);
  for (const each of [partial, end]) {
    assert.equal(encodedSseFrame(each).bytes.toString('utf8'), formatFrame(toSseFrame(each)));
    assert.equal(encodedSseFrame(each), encodedSseFrame(each), 'the same bytes, not encoded again');
  }
  assert.match(encodedSseFrame(partial).bytes.toString('utf8'), /^id: 0-1\nevent: thread\.message\.delta\ndata: .*"delta":"Hel\\nlo"/);
  assert.equal(encodedSseFrame(end).chunk.toString('utf8'), '22\r\nid: 0-2\nevent: done\ndata: [DONE]\n\n\r\n');
});

test('a chunk\'s size counts bytes, not characters, and its bytes are a view of the chunk', () => {
  const text = 'ü€😀\n';
  const encoded = encodeChunk(text);
  assert.equal(encoded.chunk.toString('utf8'), `a\r\n${text}\r\n`);
  assert.equal(encoded.bytes.toString('utf8'), text);
  assert.equal(encoded.bytes.byteOffset, encoded.chunk.byteOffset + 3, 'a view after the size line, not a copy');
  assert.throws(() => encodeChunk(''), /never empty/);
});
