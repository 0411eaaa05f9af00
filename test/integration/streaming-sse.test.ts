import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';
import { readSse, seqOf, type SseMessage } from '../helpers/sse-client.ts';

describe('GET /api/v1/stream/sse', () => {
  const gateway = useGateway();
  let finishedTaskId: string;
  let allEvents: Array<{ seq: number; stream_id: string; type: string }>;

  before(async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'stream this answer', context: { mock_answer_words: 60, mock_delay_ms: 300 } });
    finishedTaskId = submitted.body.task_id;
    await waitForTask(gateway(), finishedTaskId);
    allEvents = (await gateway().sql.query('select seq, stream_id, type from task_events where task_id = $1 order by seq', [finishedTaskId])).rows;
  });

  const sseUrl = (query: string) => `${gateway().url}/api/v1/stream/sse?${query}`;

  it('replays a finished task from the start with the spec event names, then closes', async () => {
    const stream = await readSse(sseUrl(`workflow_id=${finishedTaskId}`));
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(stream.headers.get('cache-control'), 'no-cache, no-transform');
    assert.equal(stream.headers.get('x-accel-buffering'), 'no');
    assert.ok(stream.closedByServer);
    assert.ok(stream.comments.some((comment) => comment.startsWith('connected to workflow')));
    assert.deepEqual(stream.messages.map((message) => message.id), allEvents.map((event) => event.stream_id));
    const last = stream.messages.at(-1)!;
    assert.deepEqual([last.event, last.data], ['done', '[DONE]']);
    for (const message of stream.messages.slice(0, -1)) {
      const data = JSON.parse(message.data);
      assert.equal(typeof data.type, 'string');
      assert.equal(typeof data.seq, 'number');
    }
    const names = new Set(stream.messages.map((message) => message.event));
    for (const name of ['WORKFLOW_STARTED', 'AGENT_STARTED', 'thread.message.delta', 'thread.message.completed', 'WORKFLOW_COMPLETED', 'done']) {
      assert.ok(names.has(name), `${name} present`);
    }
    const deltas = stream.messages.filter((message) => message.event === 'thread.message.delta').map((message) => JSON.parse(message.data).delta).join('');
    const completed = JSON.parse(stream.messages.find((message) => message.event === 'thread.message.completed')!.data);
    assert.equal(deltas, completed.response, 'the deltas add up to the final answer');
    for (const message of stream.messages.filter((frame) => frame.event === 'thread.message.delta')) {
      const { delta, message: text, payload } = JSON.parse(message.data);
      assert.equal(text, delta, 'a delta frame carries its text as the spec\'s message and as Shannon\'s delta');
      assert.deepEqual(payload, { final_answer: true }, 'and not a third time in the payload');
    }
    assert.equal(completed.agent_id, 'final_output');
    assert.ok(completed.metadata.usage.total_tokens > 0);
  });

  it('follows a running task live and ends with done', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks/stream', { query: 'live please', context: { mock_answer_words: 40, mock_delay_ms: 1500 } });
    const stream = await readSse(`${gateway().url}${submitted.body.stream_url}`);
    assert.ok(stream.closedByServer);
    const seqs = stream.messages.slice(0, -1).map(seqOf);
    assert.deepEqual(seqs, seqs.map((_, index) => index + 1), 'every event, in order, without gaps');
    assert.equal(stream.messages.at(-1)!.event, 'done');
    assert.ok(stream.messages.filter((message) => message.event === 'thread.message.delta').length > 1, 'tokens arrive as several deltas');
  });

  it('resumes after a numeric seq, after a stream id, and prefers the Last-Event-ID header', async () => {
    const afterSeq = await readSse(sseUrl(`workflow_id=${finishedTaskId}&last_event_id=5`));
    assert.equal(seqOf(afterSeq.messages[0]), 6);
    const afterId = await readSse(sseUrl(`workflow_id=${finishedTaskId}&last_event_id=${allEvents[6].stream_id}`));
    assert.equal(seqOf(afterId.messages[0]), 8);
    const header = await readSse(sseUrl(`workflow_id=${finishedTaskId}&last_event_id=2`), { headers: { 'last-event-id': allEvents[3].stream_id } });
    assert.equal(seqOf(header.messages[0]), 5);
    const atEnd = await readSse(sseUrl(`workflow_id=${finishedTaskId}&last_event_id=${allEvents.length}`), { timeoutMs: 5_000 });
    assert.equal(atEnd.messages.length, 0);
    assert.ok(atEnd.closedByServer, 'a cursor past the end of a finished task closes at once');
  });

  it('a resume point past the end of the log follows from its end, and does not hold back the task\'s other streams', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'resume far ahead', context: { mock_answer_words: 40, mock_delay_ms: 1500 } });
    const taskId = submitted.body.task_id;
    // Opened first, so its resume point is the one the process's shared reading of the task starts from.
    const aheadOpen = Promise.withResolvers<void>();
    const ahead = readSse(sseUrl(`workflow_id=${taskId}&last_event_id=100000`), { timeoutMs: 15_000, onOpen: () => aheadOpen.resolve() });
    await aheadOpen.promise;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const fromStart = await readSse(sseUrl(`workflow_id=${taskId}`), { timeoutMs: 15_000 });
    assert.ok(fromStart.closedByServer, 'the stream from the start ended with the task, not at its timeout');
    const seqs = fromStart.messages.slice(0, -1).map(seqOf);
    assert.deepEqual(seqs, seqs.map((_, index) => index + 1), 'every event once, in order');
    assert.equal(fromStart.messages.at(-1)!.event, 'done');
    const aheadStream = await ahead;
    assert.ok(aheadStream.closedByServer, 'the stream resumed past the end ended with the task too');
    const aheadSeqs = aheadStream.messages.slice(0, -1).map(seqOf);
    assert.ok(aheadSeqs.length > 0 && aheadSeqs.includes(seqs.at(-1)!), `it followed from the end of the log: got ${aheadSeqs.join(',')}`);
    assert.deepEqual(aheadSeqs, seqs.slice(seqs.indexOf(aheadSeqs[0]!)), 'from where it joined, every event once, in order');
    assert.equal(aheadStream.messages.at(-1)!.event, 'done');
  });

  it('filters by types and still ends with done', async () => {
    const stream = await readSse(sseUrl(`workflow_id=${finishedTaskId}&types=LLM_OUTPUT,WORKFLOW_COMPLETED`));
    assert.deepEqual(stream.messages.map((message) => message.event), ['thread.message.completed', 'WORKFLOW_COMPLETED', 'done']);
  });

  it('answers 400 without workflow_id or with a malformed resume point, and 404 for an unknown task', async () => {
    const missing = await readSse(sseUrl('types=LLM_OUTPUT'));
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { error: 'workflow_id is required' });
    const badCursor = await readSse(sseUrl(`workflow_id=${finishedTaskId}&last_event_id=abc`));
    assert.equal(badCursor.status, 400);
    const unknown = await readSse(sseUrl('workflow_id=3f1b6a4e-1111-4222-8333-944455556666'));
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { error: 'Task not found' });
    const notUuid = await readSse(sseUrl('workflow_id=task-123'));
    assert.equal(notUuid.status, 404);
  });
});

describe('SSE resume at random points of a long stream', () => {
  // Fine-grained deltas so one answer yields hundreds of events. How many depends on the machine: the mock's tokens
  // come on schedule, and a delta is cut each time the 2 ms timer fires, which a busy process fires late (a 2 s
  // answer gave 371 events under the whole suite's load).
  const gateway = useGateway({ env: { EVENT_PARTIAL_INTERVAL_MS: '2' } });

  it('a client that disconnects at random points while the task runs loses and repeats nothing', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'a long one', context: { mock_answer_words: 3000, mock_delay_ms: 4000 } });
    const taskId = submitted.body.task_id;
    const received: SseMessage[] = [];
    let cursor: string | undefined;
    let reconnects = 0;
    while (received.at(-1)?.event !== 'done') {
      const headers: Record<string, string> = cursor ? { 'last-event-id': cursor } : {};
      const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}`, { headers, maxEvents: 1 + Math.floor(Math.random() * 60) });
      received.push(...stream.messages);
      cursor = received.at(-1)?.id ?? cursor;
      reconnects += 1;
    }
    const { rows } = await gateway().sql.query('select seq, stream_id from task_events where task_id = $1 order by seq', [taskId]);
    assert.ok(rows.length >= 200, `the task produced ${rows.length} events`);
    assert.ok(reconnects > 5);
    assert.deepEqual(received.map((message) => message.id), rows.map((row) => row.stream_id));
  });

  it('100 resumes from random cursors (seq, stream id, header) each yield exactly the events after the cursor', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'replay me', context: { mock_answer_words: 3000, mock_delay_ms: 4000 } });
    const taskId = submitted.body.task_id;
    await waitForTask(gateway(), taskId, 60_000);
    const { rows } = await gateway().sql.query('select seq, stream_id from task_events where task_id = $1 order by seq', [taskId]);
    assert.ok(rows.length >= 200, `the task produced ${rows.length} events`);
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const position = Math.floor(Math.random() * rows.length);
      const cursor = rows[position];
      const form = attempt % 3;
      const query = form === 0 ? `&last_event_id=${cursor.seq}` : form === 1 ? `&last_event_id=${cursor.stream_id}` : '';
      const headers: Record<string, string> = form === 2 ? { 'last-event-id': cursor.stream_id } : {};
      const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}${query}`, { headers });
      assert.deepEqual(stream.messages.map((message) => message.id), rows.slice(position + 1).map((row) => row.stream_id), `cursor ${cursor.seq} form ${form}`);
    }
  });
});
