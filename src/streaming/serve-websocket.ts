import type { WebSocket } from 'ws';
import type { Deps } from '../deps.ts';
import { followTaskEvents } from '../events/follow-events.ts';
import { createInactivityTimer } from './inactivity.ts';
import { shutdownNotice } from './shutdown-notice.ts';
import type { StreamPlan } from './prepare-stream.ts';
import type { StreamLease } from './stream-slots.ts';

const PING_INTERVAL_MS = 20_000;

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
  deps.stopping.addEventListener('abort', onShutdown, { once: true });
  if (deps.stopping.aborted) onShutdown();
  socket.on('close', () => closed.abort());
  socket.on('error', () => closed.abort());
  // Clients may send anything (e.g. keepalives); the stream is one-way, so messages are ignored.
  socket.on('message', () => {});
  try {
    for await (const event of followTaskEvents(deps.db, deps.events, plan.taskId, { afterSeq: plan.afterSeq, types: plan.types, signal: idle.signal, logger: deps.logger })) {
      idle.touch();
      if (socket.bufferedAmount > streams.bufferLimitBytes) {
        socket.send(JSON.stringify({ type: 'ERROR_OCCURRED', workflow_id: plan.taskId, seq: event.seq, code: 'consumer_too_slow',
          message: `stream consumer fell more than ${streams.bufferLimitBytes} bytes behind; reconnect with last_event_id=${event.stream_id}` }));
        break;
      }
      socket.send(JSON.stringify(event));
      resumeFrom = event.stream_id;
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
    deps.stopping.removeEventListener('abort', onShutdown);
    clearInterval(heartbeat);
    idle.dispose();
    lease.release();
  }
}
