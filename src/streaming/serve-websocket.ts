import type { WebSocket } from 'ws';
import type { Deps } from '../deps.ts';
import type { TaskEvent } from '../events/append-event.ts';
import { deliverTaskEventBatches } from '../events/follow-events.ts';
import { whenAborted } from '../http/when-aborted.ts';
import { createInactivityTimer } from './inactivity.ts';
import { fellBehindNotice, shutdownNotice } from './stream-notices.ts';
import type { StreamPlan } from './prepare-stream.ts';
import type { StreamLease } from './stream-slots.ts';

const PING_INTERVAL_MS = 20_000;

/** An event's message, encoded once for every socket that sends it (the streams of a task share its event objects). */
const encodedMessages = new WeakMap<TaskEvent, Buffer>();
function encodedEventMessage(event: TaskEvent): Buffer {
  let encoded = encodedMessages.get(event);
  if (encoded === undefined) encodedMessages.set(event, encoded = Buffer.from(JSON.stringify(event)));
  return encoded;
}

/** One JSON event per message; STREAM_END then close. A peer that misses a pong round is dropped. */
export async function serveWebSocketStream(deps: Deps, socket: WebSocket, plan: StreamPlan, lease: StreamLease): Promise<void> {
  const { streams } = deps.config;
  const closed = new AbortController();
  const idle = createInactivityTimer(streams.inactivityTimeoutMs, AbortSignal.any([closed.signal, lease.revoked]));
  let alive = true;
  const heartbeat = setInterval(() => {
    if (!alive) return socket.terminate();
    alive = false;
    socket.ping();
  }, PING_INTERVAL_MS);
  socket.on('pong', () => { alive = true; });
  let resumeFrom = String(plan.afterSeq);
  const onShutdown = () => {
    socket.send(JSON.stringify(shutdownNotice(plan.taskId, resumeFrom)));
    socket.close(1012, `server restarting; reconnect with last_event_id=${resumeFrom}`);
  };
  const stopWatching = whenAborted(deps.stopping, onShutdown);
  socket.on('close', () => closed.abort());
  socket.on('error', () => closed.abort());
  // Clients may send anything (e.g. keepalives); the stream is one-way, so messages are ignored.
  socket.on('message', () => {});
  try {
    let lastSentSeq = plan.afterSeq;
    let hasFallenBehind = false;
    await deliverTaskEventBatches(deps.db, deps.events, plan.taskId, { afterSeq: plan.afterSeq, types: plan.types, signal: idle.signal, logger: deps.logger }, (events) => {
      idle.touch();
      for (const event of events) {
        if (socket.bufferedAmount > streams.bufferLimitBytes) {
          hasFallenBehind = true;
          return false;
        }
        socket.send(encodedEventMessage(event), { binary: false });
        lastSentSeq = event.seq;
        resumeFrom = event.stream_id;
      }
      return true;
    });
    if (hasFallenBehind) {
      // Named by the last event sent: the one that found the buffer full was not.
      socket.send(JSON.stringify(fellBehindNotice(plan.taskId, lastSentSeq, resumeFrom, streams.bufferLimitBytes)));
    }
    if (lease.revoked.aborted) {
      socket.send(JSON.stringify({ type: 'ERROR_OCCURRED', workflow_id: plan.taskId, code: 'credential_revoked', message: lease.revoked.reason }));
      socket.close(1008, 'credential no longer valid');
    } else {
      socket.close(1000, idle.expired ? 'inactivity timeout' : 'stream ended');
    }
  } catch (error) {
    deps.logger.error({ err: error, task_id: plan.taskId }, 'websocket stream failed');
    socket.close(1011, 'event stream failed');
  } finally {
    stopWatching();
    clearInterval(heartbeat);
    idle.dispose();
    lease.release();
  }
}
