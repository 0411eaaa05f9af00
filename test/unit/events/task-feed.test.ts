import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TaskEvent } from '../../../src/events/append-event.ts';
import { createTaskFeeds, type FeedLimits, type FeedFollowOptions, type TaskFeeds } from '../../../src/events/task-feed.ts';

const TASK = 'task-1';
/** A follower that misses an event would wait forever: fail instead. */
const BOUNDED = { timeout: 5_000 };

/** An in-memory event log with a hub that wakes twice per append (in-process, then NOTIFY), as the gateway's does. */
function createLog(limits: Partial<FeedLimits> = {}) {
  const events: TaskEvent[] = [];
  const onWakes = new Set<(committed?: readonly TaskEvent[], lastSeq?: number) => void>();
  const reads: Array<{ afterSeq: number; signal: AbortSignal }> = [];
  let gate: Promise<void> | undefined;
  let failure: Error | undefined;
  /** A held read answers with the log as it was when the read started, as a query's snapshot would. */
  let snapshotReads = false;
  const hub = {
    subscribe(_taskId: string, onWake: (committed?: readonly TaskEvent[], lastSeq?: number) => void) {
      onWakes.add(onWake);
      return () => onWakes.delete(onWake);
    },
  };
  const feeds = createTaskFeeds(hub, async (_taskId, afterSeq, limit, signal) => {
    reads.push({ afterSeq, signal });
    const logAtStart = events.slice();
    await gate;
    if (failure) throw failure;
    if (signal.aborted) return [];
    return (snapshotReads ? logAtStart : events).filter((event) => event.seq > afterSeq).slice(0, limit);
  }, { batchSize: 5, ringSize: 1_000, pollMs: 60_000, ...limits });
  return {
    feeds, reads, onWakes,
    append(types: string[], { wake = true } = {}) {
      for (const type of types) events.push(taskEvent(events.length + 1, type));
      if (wake) for (let twice = 0; twice < 2; twice++) for (const onWake of [...onWakes]) onWake();
    },
    /** An append of the gateway's own process: its in-process wake hands over what it committed, the NOTIFY does not. */
    appendCommitted(types: string[]) {
      const first = events.length + 1;
      for (const type of types) events.push(taskEvent(events.length + 1, type));
      const committed = events.slice(first - 1);
      for (const onWake of [...onWakes]) onWake(committed);
    },
    /** An append of this process announced both ways, as the gateway does: in-process with its events, and by a NOTIFY naming its last seq. */
    appendOwn(types: string[], { notifyFirst = false } = {}) {
      const first = events.length + 1;
      for (const type of types) events.push(taskEvent(events.length + 1, type));
      const committed = events.slice(first - 1);
      const handOver = () => { for (const onWake of [...onWakes]) onWake(committed); };
      const notify = () => { for (const onWake of [...onWakes]) onWake(undefined, events.length); };
      if (notifyFirst) { notify(); handOver(); } else { handOver(); notify(); }
    },
    /** A NOTIFY naming the task's last seq, for an append of another process. */
    appendElsewhere(types: string[]) {
      for (const type of types) events.push(taskEvent(events.length + 1, type));
      for (const onWake of [...onWakes]) onWake(undefined, events.length);
    },
    hold() {
      const released = Promise.withResolvers<void>();
      gate = released.promise;
      return () => { gate = undefined; released.resolve(); };
    },
    failReads(error: Error | undefined) { failure = error; },
    readSnapshots() { snapshotReads = true; },
  };
}

const taskEvent = (seq: number, type: string): TaskEvent => ({
  workflow_id: TASK, type, agent_id: null, message: `event ${seq}`, payload: null, timestamp: new Date(0).toISOString(), seq, stream_id: `0-${seq}`,
});

const partials = (count: number) => Array.from({ length: count }, () => 'LLM_PARTIAL');
const oneToN = (count: number, from = 1) => Array.from({ length: count }, (_, index) => from + index);

async function collect(events: AsyncGenerator<TaskEvent>, onEvent: (event: TaskEvent) => Promise<void> | void = () => {}): Promise<number[]> {
  const seqs: number[] = [];
  for await (const event of events) {
    seqs.push(event.seq);
    await onEvent(event);
  }
  return seqs;
}

/** The pushed follower's side of collect: each event's wait (if any) holds the batch, as a draining socket does. */
async function collectPushed(feeds: TaskFeeds, options: FeedFollowOptions, onEvent: (event: TaskEvent) => Promise<void> | void = () => {}): Promise<number[]> {
  const seqs: number[] = [];
  await feeds.deliverBatches(TASK, options, (events) => {
    const waits = events.map((event) => {
      seqs.push(event.seq);
      return onEvent(event);
    }).filter((result) => result instanceof Promise);
    return waits.length === 0 || Promise.all(waits).then(() => true);
  });
  return seqs;
}

type Log = ReturnType<typeof createLog>;
type Follow = (log: Log, options?: Partial<FeedFollowOptions>, onEvent?: (event: TaskEvent) => Promise<void> | void) => Promise<number[]>;
const withDefaults = (options: Partial<FeedFollowOptions>): FeedFollowOptions => ({ afterSeq: 0, signal: new AbortController().signal, ...options });

/** Every test runs for both ways of following: pulled batch by batch (follow), and pushed by the feed (deliverBatches). */
const FOLLOW_MODES: Record<string, Follow> = {
  pulled: (log, options = {}, onEvent) => collect(log.feeds.follow(TASK, withDefaults(options)), onEvent),
  pushed: (log, options = {}, onEvent) => collectPushed(log.feeds, withDefaults(options), onEvent),
};

/** Lets every pending read and delivery run (the fake log answers in microtasks). */
async function settle(): Promise<void> {
  for (let round = 0; round < 20; round++) await new Promise((resolve) => setImmediate(resolve));
}

for (const [mode, follow] of Object.entries(FOLLOW_MODES)) describe(mode, () => {
  test('fifty followers of a running task each get every event once, in order, and share one read per wake-up', BOUNDED, async () => {
    const log = createLog();
    const followers = Array.from({ length: 50 }, () => follow(log));
    await settle();
    const readsToJoin = log.reads.length;
    assert.ok(readsToJoin <= 51, `joining took ${readsToJoin} reads`);
    const appends = 20;
    for (let batch = 0; batch < appends; batch++) {
      log.append(partials(3));
      await settle();
    }
    log.append(['STREAM_END']);
    const streams = await Promise.all(followers);
    for (const seqs of streams) assert.deepEqual(seqs, oneToN(3 * appends + 1));
    const liveReads = log.reads.length - readsToJoin;
    // Each append wakes twice; the second wake finds nothing new. Per-follower reading would take 50 × 21 × 2.
    assert.ok(liveReads <= 2 * (appends + 1), `${liveReads} reads for ${appends + 1} appends`);
  });

  test('wake-ups during a read fold into one more read, never one read per wake-up', BOUNDED, async () => {
    const log = createLog();
    const follower = follow(log);
    await settle();
    const release = log.hold();
    log.append(partials(2));
    for (let wake = 0; wake < 10; wake++) log.append([], { wake: true });
    await settle();
    const readsDuringHold = log.reads.length;
    release();
    await settle();
    assert.equal(log.reads.length, readsDuringHold + 1, 'one more read for all the wake-ups that came during the first');
    log.append(['STREAM_END']);
    assert.deepEqual(await follower, [1, 2, 3]);
  });

  test('a follower too slow for the ring reads the log itself, gets everything, and does not hold back the others', BOUNDED, async () => {
    const log = createLog({ ringSize: 4 });
    const fastDone = Promise.withResolvers<void>();
    const slowSignal = new AbortController().signal;
    const slow = follow(log, { signal: slowSignal }, async (event) => {
      if (event.seq === 1) await fastDone.promise;
    });
    const fast = follow(log).finally(() => fastDone.resolve());
    await settle();
    for (let batch = 0; batch < 10; batch++) {
      log.append(partials(3));
      await settle();
    }
    log.append(['STREAM_END']);
    assert.deepEqual(await fast, oneToN(31), 'the fast follower finished while the slow one was stuck on its first event');
    assert.deepEqual(await slow, oneToN(31));
    const ownReads = log.reads.filter((read) => read.signal === slowSignal).map((read) => read.afterSeq);
    assert.deepEqual(ownReads, [0, 3, 8, 13, 18, 23], 'the slow follower read the log from its own cursor up to the ring');
  });

  test('a late follower takes recent events from the ring without a query, and an older cursor replays from the log', BOUNDED, async () => {
    const log = createLog({ ringSize: 10 });
    const first = follow(log);
    await settle();
    for (let batch = 0; batch < 6; batch++) {
      log.append(partials(5));
      await settle();
    }
    const readsBefore = log.reads.length;
    const recent = follow(log, { afterSeq: 25 });
    await settle();
    assert.equal(log.reads.length, readsBefore, 'a cursor inside the ring needs no query');
    const older = follow(log, { afterSeq: 5 });
    await settle();
    assert.deepEqual(log.reads.slice(readsBefore).map((read) => read.afterSeq), [5, 10, 15], 'the older cursor read its way up to the ring');
    log.append(['LLM_PARTIAL', 'STREAM_END']);
    assert.deepEqual(await first, oneToN(32));
    assert.deepEqual(await recent, oneToN(7, 26));
    assert.deepEqual(await older, oneToN(27, 6));
  });

  test('the type filter applies and STREAM_END always arrives and ends the stream', BOUNDED, async () => {
    const log = createLog();
    log.append(['WORKFLOW_STARTED', 'LLM_PARTIAL', 'LLM_OUTPUT']);
    const filtered = follow(log, { types: ['LLM_OUTPUT'] });
    await settle();
    log.append(['LLM_PARTIAL', 'LLM_OUTPUT', 'WORKFLOW_COMPLETED', 'STREAM_END', 'LLM_PARTIAL']);
    assert.deepEqual(await filtered, [3, 5, 7]);
  });

  test('a lost notification is made good by the poll', BOUNDED, async () => {
    const log = createLog({ pollMs: 20 });
    const follower = follow(log);
    await settle();
    log.append(['LLM_PARTIAL', 'STREAM_END'], { wake: false });
    assert.deepEqual(await follower, [1, 2]);
  });

  test('the feed stops listening with its last follower, and a new follower starts a new one', BOUNDED, async () => {
    const log = createLog();
    const stop = new AbortController();
    const stopped = follow(log, { signal: stop.signal });
    const ended = follow(log);
    await settle();
    assert.equal(log.onWakes.size, 1, 'one subscription for the task, whatever the number of followers');
    stop.abort();
    assert.deepEqual(await stopped, []);
    assert.equal(log.onWakes.size, 1, 'the feed stays while a follower remains');
    log.append(['STREAM_END']);
    assert.deepEqual(await ended, [1]);
    assert.equal(log.onWakes.size, 0);
    assert.deepEqual(await follow(log), [1]);
    assert.equal(log.onWakes.size, 0);
  });

  test('an abort ends a waiting follower quietly, and a failed read fails the waiting followers', BOUNDED, async () => {
    const log = createLog();
    const stop = new AbortController();
    const aborted = follow(log, { signal: stop.signal });
    const failing = follow(log);
    await settle();
    stop.abort();
    assert.deepEqual(await aborted, []);
    log.failReads(new Error('relation "task_events" does not exist'));
    log.append(['LLM_PARTIAL']);
    await assert.rejects(failing, /task_events/);
  });

  test('events this process committed reach a caught-up feed without a read; a gap before them is read from the log', BOUNDED, async () => {
    const log = createLog();
    const follower = follow(log);
    await settle();
    const readsToJoin = log.reads.length;
    for (let batch = 0; batch < 5; batch++) {
      log.appendCommitted(partials(2));
      await settle();
    }
    assert.equal(log.reads.length, readsToJoin, 'committed events continuing the feed are taken as read');
    log.append(['PROGRESS'], { wake: false });
    log.appendCommitted(['STREAM_END']);
    await settle();
    assert.equal(log.reads.length, readsToJoin + 1, 'a gap (an event written elsewhere) makes the feed read the log');
    assert.deepEqual(await follower, oneToN(12));
  });

  test('a NOTIFY naming a seq the feed already holds costs no read; one arriving before the hand-over costs one read, not two', BOUNDED, async () => {
    const log = createLog();
    const follower = follow(log);
    await settle();
    const readsToJoin = log.reads.length;
    for (let batch = 0; batch < 5; batch++) {
      log.appendOwn(partials(2));
      await settle();
    }
    assert.equal(log.reads.length, readsToJoin, 'the NOTIFY after the hand-over names a seq the feed holds');
    log.appendOwn(partials(2), { notifyFirst: true });
    await settle();
    assert.equal(log.reads.length, readsToJoin + 1, 'the NOTIFY read the events; the hand-over during the read added nothing');
    log.appendElsewhere(['PROGRESS']);
    await settle();
    assert.equal(log.reads.length, readsToJoin + 2, 'another process\'s append is read once');
    log.appendOwn(['STREAM_END']);
    assert.deepEqual(await follower, oneToN(14));
  });

  test('during a read, a NOTIFY past what the read returns costs one more read; one the read covered costs none', BOUNDED, async () => {
    const log = createLog();
    const follower = follow(log);
    await settle();
    const readsToJoin = log.reads.length;
    let release = log.hold();
    log.appendElsewhere(['PROGRESS']);
    await settle();
    log.appendElsewhere(['PROGRESS']);
    release();
    await settle();
    assert.equal(log.reads.length, readsToJoin + 1, 'the held read returned both events, so the second NOTIFY is covered');
    log.readSnapshots();
    release = log.hold();
    log.appendElsewhere(['PROGRESS']);
    await settle();
    log.appendElsewhere(['PROGRESS']);
    release();
    await settle();
    assert.equal(log.reads.length, readsToJoin + 3, 'the read saw seq 3 only; the NOTIFY of seq 4 during it cost exactly one more read');
    log.appendElsewhere(['STREAM_END']);
    assert.deepEqual(await follower, oneToN(5));
  });

  test('a follower joining a quiet log reads it once; one woken during that read reads once more', BOUNDED, async () => {
    const quiet = createLog();
    quiet.append(['PROGRESS'], { wake: false });
    const first = follow(quiet);
    await settle();
    assert.equal(quiet.reads.length, 1, 'nothing was announced during the catch-up read');
    quiet.appendOwn(['STREAM_END']);
    assert.deepEqual(await first, [1, 2]);

    const busy = createLog();
    busy.readSnapshots();
    const release = busy.hold();
    const second = follow(busy);
    await settle();
    busy.appendElsewhere(['PROGRESS']);
    release();
    await settle();
    assert.equal(busy.reads.length, 2, 'the event announced during the catch-up read is read after it');
    busy.appendElsewhere(['STREAM_END']);
    assert.deepEqual(await second, [1, 2]);
  });

});

describe('pushed, beyond what both modes share', () => {
  test('a caught-up follower has each batch written from the wake-up itself, before any promise runs', BOUNDED, async () => {
    const log = createLog();
    const batches: number[][] = [];
    const done = log.feeds.deliverBatches(TASK, withDefaults({}), (events) => {
      batches.push(events.map((event) => event.seq));
      return true;
    });
    await settle();
    log.appendCommitted(partials(3));
    assert.deepEqual(batches, [[1, 2, 3]], 'delivered within the wake-up, as one batch');
    log.appendCommitted(['STREAM_END']);
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
    await done;
  });

  test('a follower that answers false is let go at once; one whose delivery throws fails alone, and the wake-up goes on', BOUNDED, async () => {
    const log = createLog();
    let stoppedCalls = 0;
    const stopped = log.feeds.deliverBatches(TASK, withDefaults({}), () => {
      stoppedCalls += 1;
      return false;
    });
    const throwing = log.feeds.deliverBatches(TASK, withDefaults({}), () => {
      throw new Error('socket exploded');
    });
    const healthy = FOLLOW_MODES.pushed(log);
    await settle();
    assert.doesNotThrow(() => log.appendCommitted(partials(2)), 'one stream\'s failure does not reach the append that woke it');
    await stopped;
    await assert.rejects(throwing, /socket exploded/);
    log.appendCommitted(['STREAM_END']);
    assert.deepEqual(await healthy, [1, 2, 3]);
    assert.equal(stoppedCalls, 1, 'a follower that said stop is handed nothing more');
    assert.equal(log.onWakes.size, 0, 'every follower left the feed');
  });
});
