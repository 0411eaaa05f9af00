import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskEvent } from '../../../src/events/append-event.ts';
import { formatFrame } from '../../../src/events/sse.ts';
import { sseFrameText, toSseFrame } from '../../../src/events/sse-names.ts';

const event = (seq: number, type: string, message: string | null): TaskEvent => ({
  workflow_id: 'task-1', type, agent_id: null, message, payload: null, timestamp: new Date(0).toISOString(), seq, stream_id: `0-${seq}`,
});

test('an event\'s frame text is its formatted frame, the same for every stream that writes it', () => {
  const partial = event(1, 'LLM_PARTIAL', 'Hel\nlo');
  const end = event(2, 'STREAM_END', null);
  for (const each of [partial, end]) {
    assert.equal(sseFrameText(each), formatFrame(toSseFrame(each)));
    assert.equal(sseFrameText(each), sseFrameText(each));
  }
  assert.match(sseFrameText(partial), /^id: 0-1\nevent: thread\.message\.delta\ndata: .*"delta":"Hel\\nlo"/);
  assert.equal(sseFrameText(end), 'id: 0-2\nevent: done\ndata: [DONE]\n\n');
});
