import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { parseSseText, readSse } from '../helpers/sse-client.ts';

describe('stream limits', () => {
  const gateway = useGateway({
    env: { MAX_STREAMS_PER_KEY: '2', STREAM_INACTIVITY_TIMEOUT_SECONDS: '1', SSE_PING_INTERVAL_MS: '200' },
  });

  it('closes a stream after the inactivity timeout while still sending pings', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow', context: { mock_delay_ms: 60_000 } });
    const started = Date.now();
    const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}`, { timeoutMs: 10_000 });
    assert.ok(stream.closedByServer);
    assert.ok(Date.now() - started < 8_000);
    assert.ok(stream.comments.includes('ping'), 'pings are sent');
    assert.ok(stream.comments.includes('closing after inactivity'));
  });

  it('refuses a stream beyond the per-key limit with 429', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow too', context: { mock_delay_ms: 60_000, mock_answer_words: 200 } });
    const url = `${gateway().url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}`;
    const controllers = [new AbortController(), new AbortController()];
    const open = controllers.map((controller) => fetch(url, { signal: controller.signal }));
    const responses = await Promise.all(open);
    assert.deepEqual(responses.map((response) => response.status), [200, 200]);
    const third = await fetch(url);
    assert.equal(third.status, 429);
    assert.match((await third.json()).error, /concurrent streams/);
    for (const controller of controllers) controller.abort();
    await waitFor('slots to be released', async () => {
      const retry = await fetch(url, { signal: AbortSignal.timeout(500) }).catch(() => undefined);
      return retry?.status === 200 ? true : undefined;
    }, 5_000);
  });

  it('frees in the database the slots of streams that end together with their task', async () => {
    await waitFor('earlier tests\' streams to be gone', async () => (await gateway().sql.query('select 1 from stream_leases')).rowCount === 0 || undefined, 5_000);
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'ends two streams', context: { mock_delay_ms: 60_000, mock_answer_words: 200 } });
    const url = `${gateway().url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}`;
    const streams = await Promise.all([1, 2].map(() => fetch(url)));
    assert.deepEqual(streams.map((response) => response.status), [200, 200]);
    assert.equal((await gateway().sql.query('select 1 from stream_leases')).rowCount, 2);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${submitted.body.task_id}/cancel`, {})).status, 200);
    const bodies = await Promise.all(streams.map((response) => response.text()));
    for (const body of bodies) assert.ok(parseSseText(body).at(-1)?.event === 'done', 'each stream ran to its end');
    await waitFor('both slots to be freed', async () => (await gateway().sql.query('select 1 from stream_leases')).rowCount === 0 || undefined, 5_000);
  });

});

describe('a stream consumer that stops reading', () => {
  const gateway = useGateway({ env: { STREAM_BUFFER_LIMIT_BYTES: '1024', EVENT_PARTIAL_INTERVAL_MS: '1' } });
  let taskId: string;
  let lastSeq: number;

  /**
   * A finished task whose log holds about 10 MB, more than the kernel's socket buffers take in for a client that
   * does not read: 2,000 PROGRESS events of 5,000 characters appended (as the gateway appends) while it runs.
   */
  const finishedLongTask = async () => {
    if (taskId) return;
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'a long log', mode: 'simple', context: { mock_delay_ms: 60_000 } });
    taskId = submitted.body.task_id;
    await waitFor('the task to start', async () => (await gateway().sql.query('select 1 from task_events where task_id = $1', [taskId])).rowCount! > 0 || undefined, 10_000);
    const events = Array.from({ length: 2_000 }, (_, index) => ({ type: 'PROGRESS', agent_id: null, message: `${index} ${'x'.repeat(5_000)}`, payload: null, dedupe_key: null }));
    await gateway().sql.query('select count(*) from append_task_events($1::uuid, $2::jsonb, $3::bigint)', [taskId, JSON.stringify(events), Date.now()]);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, {})).status, 200);
    await waitForTask(gateway(), taskId);
    lastSeq = (await gateway().sql.query('select max(seq)::int as seq from task_events where task_id = $1', [taskId])).rows[0].seq;
  };

  it('is cut off over SSE with consumer_too_slow naming the last event it was sent, and resumes from there to the end', async () => {
    await finishedLongTask();
    const url = new URL(gateway().url);
    // HTTP/1.0: the body is the event stream itself, not chunks of it.
    const socket = net.connect(Number(url.port), url.hostname);
    socket.write(`GET /api/v1/stream/sse?workflow_id=${taskId} HTTP/1.0\r\nHost: ${url.host}\r\n\r\n`);
    socket.pause();
    await sleep(2_500);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    const text = Buffer.concat(chunks).toString('utf8');
    const frames = parseSseText(text.slice(text.indexOf('\r\n\r\n') + 4));
    const error = JSON.parse(frames.at(-1)!.data);
    assert.equal(error.code, 'consumer_too_slow', `the stream ended with ${frames.at(-1)!.data.slice(0, 200)}`);
    const seqs = frames.slice(0, -1).map((frame) => JSON.parse(frame.data).seq as number);
    assert.deepEqual(seqs, seqs.map((_, index) => index + 1), 'everything before the cut-off arrived once, in order');
    assert.ok(seqs.length < lastSeq, `cut off after ${seqs.length} of ${lastSeq} events instead of buffering them all`);
    assert.equal(error.seq, seqs.at(-1), 'the error names the last event sent');
    assert.equal(error.message.match(/last_event_id=(\S+)/)?.[1], frames.at(-2)!.id);

    const rest = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}&last_event_id=${frames.at(-2)!.id}`, { timeoutMs: 30_000 });
    const restSeqs = rest.messages.slice(0, -1).map((message) => JSON.parse(message.data).seq as number);
    assert.deepEqual(restSeqs, restSeqs.map((_, index) => seqs.length + index + 1), 'the resume carries on exactly after it');
    assert.equal(restSeqs.at(-1), lastSeq - 1, 'up to the last event before STREAM_END');
    assert.equal(rest.messages.at(-1)!.event, 'done', 'and STREAM_END as done');
  });

  it('is cut off over WebSocket with consumer_too_slow naming the last event it was sent', async () => {
    await finishedLongTask();
    const socket = new WebSocket(`${gateway().url.replace('http', 'ws')}/api/v1/stream/ws?workflow_id=${taskId}`);
    const events: any[] = [];
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.on('message', (data) => events.push(JSON.parse(String(data))));
    await new Promise((resolve) => socket.once('upgrade', resolve));
    // The client's own socket stops reading (ws has no public pause).
    const tcp = (socket as unknown as { _socket: net.Socket })._socket;
    tcp.pause();
    await sleep(2_500);
    tcp.resume();
    assert.equal(await closed, 1000);
    const error = events.at(-1);
    assert.equal(error.code, 'consumer_too_slow');
    const seqs = events.slice(0, -1).map((event) => event.seq as number);
    assert.deepEqual(seqs, seqs.map((_, index) => index + 1), 'everything before the cut-off arrived once, in order');
    assert.ok(seqs.length < lastSeq, `cut off after ${seqs.length} of ${lastSeq} events`);
    assert.equal(error.seq, seqs.at(-1), 'the error names the last event sent');
    assert.equal(error.message.match(/last_event_id=(\S+)/)?.[1], events.at(-2).stream_id, 'and resuming after it loses nothing');
  });
});
