import type { TaskEvent } from './append-event.ts';
import type { EventHub, OnWake } from './event-hub.ts';

/** Up to `limit` events of a task after `afterSeq`, in seq order; waits out a database outage and resolves `[]` once `signal` aborts. */
export type ReadLog = (taskId: string, afterSeq: number, limit: number, signal: AbortSignal) => Promise<TaskEvent[]>;

export interface FeedFollowOptions {
  /**
   * At most the log's last seq (resume-point.ts sees to it): a follower that reaches the end of the log starts the
   * shared feed where it stands, so a cursor past the end would start it past events not yet written.
   */
  afterSeq: number;
  types?: string[];
  signal: AbortSignal;
  /** Asked before following: true when the log ended at or before the cursor, so there is nothing to wait for. */
  hasEndedBefore?: () => Promise<boolean>;
}

export interface TaskFeeds {
  /** Every event after the cursor, once and in seq order, until STREAM_END (delivered whatever `types` says) or abort. */
  follow(taskId: string, options: FeedFollowOptions): AsyncGenerator<TaskEvent>;
  /**
   * The same events as the batches that became readable together (never empty), pushed: a stream writes each batch
   * to its socket at once, one write per wake-up instead of one per event. Once the follower has caught up, the
   * feed hands each batch to `deliver` from its own wake-up, with no promise per follower per batch (the fan-out
   * path: a wake-up of a task with a thousand streams writes a thousand sockets in one loop). Resolves after
   * STREAM_END, on abort, or once `deliver` answers false; rejects if a read fails.
   */
  deliverBatches(taskId: string, options: FeedFollowOptions, deliver: DeliverBatch): Promise<void>;
}

/**
 * Takes a batch (never empty) and answers true to take more, false to stop, or a promise of that when the
 * follower must wait before more (a socket whose buffer is full): no batch is handed over until it settles.
 */
export type DeliverBatch = (events: TaskEvent[]) => boolean | Promise<boolean>;

export interface FeedLimits {
  batchSize: number;
  /** Recent events a feed keeps; a follower further behind reads the log itself. */
  ringSize: number;
  /** Safety net for a lost notification: a feed reads again at least this often. */
  pollMs: number;
}

/** Made once: an abort without a reason makes a DOMException with its stack trace, and every OpenAI stream closes a feed. */
const FEED_CLOSED = new DOMException('the feed closed', 'AbortError');

const DEFAULT_LIMITS: FeedLimits = { batchSize: 500, ringSize: 1_000, pollMs: 2_000 };

interface TaskFeed {
  join(): void;
  leave(): void;
  /** The events after `cursor` the feed holds; undefined when the cursor is older than its ring (or it has none yet). */
  eventsAfter(cursor: number): TaskEvent[] | undefined;
  /** Reads the log for one follower the ring cannot serve; one that reaches the end hands over to the feed. */
  catchUp(cursor: number, signal: AbortSignal): Promise<TaskEvent[]>;
  /**
   * Resolves once the feed holds an event after `cursor`, or when the follower calls the release it is handed
   * (on its abort); rejects if the feed's read fails.
   */
  waitPast(cursor: number, onWait: (release: () => void) => void): Promise<void>;
  /**
   * Pushes what the feed reads after `cursor` to `push` (which answers false to be let go) until it is let go,
   * or the follower calls the release it is handed; rejects if the feed's read fails. Resolves at once when the
   * feed already holds an event after `cursor`: the follower takes those itself first.
   */
  pushPast(cursor: number, push: (events: TaskEvent[]) => boolean, onWait: (release: () => void) => void): Promise<void>;
}

interface PushedFollower {
  push(events: TaskEvent[]): boolean;
  detached: PromiseWithResolvers<void>;
}

/** The part of `events` (after `cursor`, in seq order) a follower takes: up to STREAM_END, and `ended` if it came. */
function takeUpToEnd(events: TaskEvent[], types: string[] | undefined): { taken: TaskEvent[]; wanted: TaskEvent[]; ended: boolean } {
  const end = events.findIndex((event) => event.type === 'STREAM_END');
  const taken = end === -1 ? events : events.slice(0, end + 1);
  const wanted = types ? taken.filter((event) => types.includes(event.type) || event.type === 'STREAM_END') : taken;
  return { taken, wanted, ended: end !== -1 };
}

/**
 * Live fan-out within one process: each task with followers has one feed, which reads the task's new
 * events once per wake-up and shares them, so N streams of a task cost one query per batch instead of N.
 * The feed keeps a bounded ring of recent events and no queue per follower: a follower whose cursor is
 * older than the ring (a replay, or a consumer too slow to keep up) reads the log itself until it reaches
 * the ring, so a slow consumer costs its own queries, never the others' memory or time.
 */
export function createTaskFeeds(hub: Pick<EventHub, 'subscribe'>, readLog: ReadLog, limits: FeedLimits = DEFAULT_LIMITS): TaskFeeds {
  const feeds = new Map<string, TaskFeed>();
  const join = (taskId: string) => {
    let feed = feeds.get(taskId);
    if (!feed) feeds.set(taskId, feed = openFeed(taskId, hub, readLog, limits, () => feeds.delete(taskId)));
    feed.join();
    return feed;
  };

  async function* followBatches(taskId: string, { afterSeq, types, signal, hasEndedBefore }: FeedFollowOptions): AsyncGenerator<TaskEvent[]> {
    if (await hasEndedBefore?.()) return;
    const feed = join(taskId);
    let cursor = afterSeq;
    // One abort listener for the follower's life, not one per wait: a stream waits once per batch it writes.
    let release: (() => void) | undefined;
    const onAbort = () => release?.();
    const holdRelease = (next: () => void) => { release = next; };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const events = feed.eventsAfter(cursor) ?? await feed.catchUp(cursor, signal);
        if (events.length === 0 && !signal.aborted) await feed.waitPast(cursor, holdRelease);
        const { taken, wanted, ended } = takeUpToEnd(events, types);
        if (taken.length > 0) cursor = taken.at(-1)!.seq;
        if (wanted.length > 0) yield wanted;
        if (ended) return;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      feed.leave();
    }
  }

  async function deliverBatches(taskId: string, { afterSeq, types, signal, hasEndedBefore }: FeedFollowOptions, deliver: DeliverBatch): Promise<void> {
    if (await hasEndedBefore?.()) return;
    const feed = join(taskId);
    let cursor = afterSeq;
    let isDone = false;
    /** What the follower waits for before it takes more (its stream's buffer draining). */
    let pending: Promise<boolean> | undefined;
    /** Hands the events after the cursor to `deliver`; true while the follower can take more at once. */
    const take = (events: TaskEvent[]): boolean => {
      const fresh = events.length > 0 && events[0].seq <= cursor ? events.filter((event) => event.seq > cursor) : events;
      const { taken, wanted, ended } = takeUpToEnd(fresh, types);
      if (taken.length > 0) cursor = taken.at(-1)!.seq;
      if (ended) isDone = true;
      if (wanted.length > 0) {
        const delivered = deliver(wanted);
        if (delivered === false) isDone = true;
        else if (delivered !== true) pending = delivered;
      }
      return !isDone && pending === undefined;
    };
    let release: (() => void) | undefined;
    const onAbort = () => release?.();
    const holdRelease = (next: () => void) => { release = next; };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted && !isDone) {
        const events = feed.eventsAfter(cursor) ?? await feed.catchUp(cursor, signal);
        if (signal.aborted) return;
        // Only a follower that has read to the end waits for pushes: one behind (its catch-up read a full batch) reads on.
        if (events.length === 0) await feed.pushPast(cursor, take, holdRelease);
        else take(events);
        if (pending) {
          const waited = pending;
          pending = undefined;
          if (!await waited) return;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      feed.leave();
    }
  }

  return {
    deliverBatches,
    async* follow(taskId, options) {
      for await (const batch of followBatches(taskId, options)) yield* batch;
    },
  };
}

function openFeed(taskId: string, hub: Pick<EventHub, 'subscribe'>, readLog: ReadLog, limits: FeedLimits, onClose: () => void): TaskFeed {
  let followers = 0;
  /** The feed has read the log up to here; unset until a follower first reaches the end of the log. */
  let position: number | undefined;
  /** Every event after `ringFrom` up to `position`. */
  let ring: TaskEvent[] = [];
  let ringFrom = 0;
  let isReading = false;
  /** A wake-up came before the feed had a position: the first follower's read may not have seen what it announced. */
  let isWokenBeforeStart = false;
  /** Set by a wake-up during a read that named no seq: the read may have missed what it announced. */
  let isStale = false;
  /** The highest seq a wake-up during a read announced. */
  let announcedSeq = 0;
  const waiters = new Set<PromiseWithResolvers<void>>();
  /** Followers the feed writes to itself; each is caught up to `position`, so each takes every new event. */
  const pushed = new Set<PushedFollower>();
  const closing = new AbortController();

  const advance = (events: TaskEvent[]) => {
    if (events.length === 0) return;
    ring.push(...events);
    position = events.at(-1)!.seq;
    if (ring.length > limits.ringSize) ringFrom = ring.splice(0, ring.length - limits.ringSize).at(-1)!.seq;
    for (const follower of pushed) pushTo(follower, events);
    settleWaiters((waiter) => waiter.resolve());
  };
  const pushTo = (follower: PushedFollower, events: TaskEvent[]) => {
    try {
      if (follower.push(events)) return;
      pushed.delete(follower);
      follower.detached.resolve();
    } catch (error) {
      // One stream's failure is its own: the feed, the other streams and the append that woke them go on.
      pushed.delete(follower);
      follower.detached.reject(error);
    }
  };
  const settleWaiters = (settle: (waiter: PromiseWithResolvers<void>) => void) => {
    for (const waiter of waiters) settle(waiter);
    waiters.clear();
  };
  /** A failed read ends every follower's wait, pushed or not, with its error. */
  const fail = (error: unknown) => {
    settleWaiters((waiter) => waiter.reject(error));
    for (const follower of pushed) follower.detached.reject(error);
    pushed.clear();
  };

  // One read in flight per task: wake-ups during it are folded into at most one more read. Every append is
  // announced twice, in-process and by NOTIFY; both name the last seq they know of, so a feed that already holds
  // it reads nothing. An append of this process hands over what it committed: when that continues the feed's
  // position, it is taken as read (the first token reaches its streams one query sooner).
  const refresh: OnWake = (committed, lastSeq) => {
    if (closing.signal.aborted) return;
    if (position === undefined) {
      isWokenBeforeStart = true;
      return;
    }
    const announced = committed?.at(-1)?.seq ?? lastSeq;
    if (announced !== undefined && announced <= position) return;
    if (!isReading && committed && takeCommitted(committed)) return;
    if (isReading) {
      if (announced === undefined) isStale = true;
      else announcedSeq = Math.max(announcedSeq, announced);
      return;
    }
    void readWhileWoken();
  };
  const readWhileWoken = async () => {
    isReading = true;
    try {
      let events: TaskEvent[];
      do {
        isStale = false;
        events = await readLog(taskId, position!, limits.batchSize, closing.signal);
        advance(events);
        // An announced seq the log does not show (yet) is left to the next wake-up or the poll, not read for in a loop.
      } while ((events.length === limits.batchSize || isStale || (events.length > 0 && announcedSeq > position!)) && !closing.signal.aborted);
    } catch (error) {
      fail(error);
    } finally {
      isReading = false;
    }
  };
  /** True when `committed` held nothing new, or continued the feed without a gap; false when the log must be read. */
  const takeCommitted = (committed: readonly TaskEvent[]) => {
    const fresh = committed.filter((event) => event.seq > position!);
    if (fresh.length > 0 && fresh[0].seq !== position! + 1) return false;
    advance(fresh);
    return true;
  };
  /** A follower has read the whole log up to `seq`: the feed starts there, or reads on if it is behind. */
  const reach = (seq: number) => {
    if (position === undefined) {
      position = ringFrom = seq;
      // What was announced during the follower's read may have been committed after it: read once more.
      if (isWokenBeforeStart) refresh();
    } else if (seq > position) {
      refresh();
    }
  };

  const unsubscribe = hub.subscribe(taskId, refresh);
  const poll = setInterval(refresh, limits.pollMs);
  poll.unref();

  return {
    join() {
      followers += 1;
    },
    leave() {
      if (--followers > 0) return;
      unsubscribe();
      clearInterval(poll);
      closing.abort(FEED_CLOSED);
      ring = [];
      onClose();
    },
    eventsAfter(cursor) {
      if (position === undefined || cursor < ringFrom) return undefined;
      let start = ring.length;
      while (start > 0 && ring[start - 1].seq > cursor) start -= 1;
      return ring.slice(start);
    },
    async catchUp(cursor, signal) {
      const events = await readLog(taskId, cursor, limits.batchSize, signal);
      if (events.length < limits.batchSize && !signal.aborted) reach(events.at(-1)?.seq ?? cursor);
      return events;
    },
    waitPast(cursor, onWait) {
      if (position !== undefined && position > cursor) return Promise.resolve();
      const waiter = Promise.withResolvers<void>();
      waiters.add(waiter);
      onWait(() => {
        waiters.delete(waiter);
        waiter.resolve();
      });
      return waiter.promise;
    },
    pushPast(cursor, push, onWait) {
      if (position !== undefined && position > cursor) return Promise.resolve();
      const follower: PushedFollower = { push, detached: Promise.withResolvers<void>() };
      pushed.add(follower);
      onWait(() => {
        pushed.delete(follower);
        follower.detached.resolve();
      });
      return follower.detached.promise;
    },
  };
}
