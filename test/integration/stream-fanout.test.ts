import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { parseSseText, readSse, type SseResult } from '../helpers/sse-client.ts';

/** Postgres flushes an idle backend's table statistics within 10 s (PGSTAT_IDLE_INTERVAL). */
const STATS_FLUSH_MS = 11_000;

describe('one task streamed to many clients', () => {
  const gateway = useGateway({ env: { MAX_STREAMS_PER_KEY: '1000' } });

  const submit = async (words: number, delayMs: number) => {
    const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'fan me out', context: { mock_answer_words: words, mock_delay_ms: delayMs } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.task_id as string;
  };
  const streamUrl = (taskId: string, query = '') => `${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}${query}`;
  /** Opens the streams and resolves once every one of them has its headers, with the promises of their results. */
  const openStreams = async (count: number, url: string) => {
    const opened: Array<Promise<void>> = [];
    const streams = Array.from({ length: count }, () => {
      const open = Promise.withResolvers<void>();
      opened.push(open.promise);
      return readSse(url, { timeoutMs: 60_000, onOpen: open.resolve });
    });
    await Promise.all(opened);
    return streams;
  };
  const storedEvents = async (taskId: string) =>
    (await gateway().sql.query('select seq, stream_id from task_events where task_id = $1 order by seq', [taskId])).rows as Array<{ seq: number; stream_id: string }>;
  const assertStillRunning = async (taskId: string) => {
    const { rows } = await gateway().sql.query(`select count(*)::int as ended from task_events where task_id = $1 and type = 'STREAM_END'`, [taskId]);
    assert.equal(rows[0].ended, 0, 'the streams joined while the answer was still streaming');
  };
  const idsOf = (stream: SseResult) => stream.messages.map((message) => message.id);

  it('fifty streams of a running task each get every event once, in order, ending with done, and share the log reads', async () => {
    const before = await taskEventScans(gateway());
    const taskId = await submit(400, 4_000);
    const streams = await openStreams(50, streamUrl(taskId));
    await assertStillRunning(taskId);
    const results = await Promise.all(streams);
    await waitForTask(gateway(), taskId);
    const stored = await storedEvents(taskId);
    assert.ok(stored.length > 50, `the task produced ${stored.length} events`);
    for (const stream of results) {
      assert.ok(stream.closedByServer);
      assert.deepEqual(idsOf(stream), stored.map((event) => event.stream_id));
      assert.equal(stream.messages.at(-1)!.event, 'done');
    }
    // Every index or table scan of task_events counts: the writer's duplicate checks, the streams' reads.
    // A query per stream per wake-up would be 50 or more per event.
    const scans = await settledTaskEventScans(gateway()) - before;
    assert.ok(scans < 10 * stored.length, `${scans} scans of task_events for ${stored.length} events and 50 streams`);
  });

  it('a stream that joins mid-answer after a seq or a stream id gets exactly the rest', async () => {
    const taskId = await submit(600, 4_000);
    const live = await openStreams(5, streamUrl(taskId));
    const sofar = await waitFor('the answer to be half way', async () => {
      const events = await storedEvents(taskId);
      return events.length >= 30 ? events : undefined;
    });
    const bySeq = sofar[Math.floor(sofar.length / 2)];
    const byStreamId = sofar[sofar.length - 3];
    const [afterSeq] = await openStreams(1, streamUrl(taskId, `&last_event_id=${bySeq.seq}`));
    const afterStreamId = readSse(streamUrl(taskId), { headers: { 'last-event-id': byStreamId.stream_id }, timeoutMs: 60_000 });
    await assertStillRunning(taskId);
    await waitForTask(gateway(), taskId);
    const stored = await storedEvents(taskId);
    const idsAfter = (seq: number) => stored.filter((event) => event.seq > seq).map((event) => event.stream_id);
    assert.deepEqual(idsOf(await afterSeq), idsAfter(bySeq.seq));
    assert.deepEqual(idsOf(await afterStreamId), idsAfter(byStreamId.seq));
    for (const stream of await Promise.all(live)) assert.deepEqual(idsOf(stream), idsAfter(0));
  });

  it('a stream that reads slowly still gets everything and holds back no other stream', async () => {
    const taskId = await submit(600, 3_000);
    const response = await fetch(streamUrl(taskId));
    const slow = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = (await slow.read()).value ?? '';
    const fast = await openStreams(20, streamUrl(taskId));
    await assertStillRunning(taskId);
    // The slow client reads nothing more until every other stream has ended.
    const fastResults = await Promise.all(fast);
    const stored = await storedEvents(taskId);
    for (const stream of fastResults) assert.deepEqual(idsOf(stream), stored.map((event) => event.stream_id));
    for (let chunk = await slow.read(); !chunk.done; chunk = await slow.read()) text += chunk.value;
    assert.deepEqual(parseSseText(text).map((message) => message.id), stored.map((event) => event.stream_id));
  });
});

async function taskEventScans(gateway: Gateway): Promise<number> {
  const { rows } = await gateway.sql.query(`select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where relname = 'task_events'`);
  return Number(rows[0]?.scans ?? 0);
}

/** The scan count once it has stayed the same for longer than Postgres may hold back an idle backend's statistics. */
async function settledTaskEventScans(gateway: Gateway): Promise<number> {
  let last = await taskEventScans(gateway);
  let since = Date.now();
  return waitFor('task_events statistics to settle', async () => {
    const now = await taskEventScans(gateway);
    if (now !== last) [last, since] = [now, Date.now()];
    return Date.now() - since >= STATS_FLUSH_MS ? now : undefined;
  }, 60_000);
}
