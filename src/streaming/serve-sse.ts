import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import type { TaskEvent } from '../events/append-event.ts';
import { deliverTaskEventBatches } from '../events/follow-events.ts';
import { openSse } from '../events/sse.ts';
import { encodedSseFrame } from '../events/sse-names.ts';
import { createInactivityTimer } from './inactivity.ts';
import { fellBehindNotice, shutdownNotice } from './stream-notices.ts';
import type { StreamPlan } from './prepare-stream.ts';
import type { StreamLease } from './stream-slots.ts';

export async function serveSseStream(deps: Deps, request: FastifyRequest, reply: FastifyReply, plan: StreamPlan, lease: StreamLease): Promise<void> {
  const { streams } = deps.config;
  let resumeFrom = String(plan.afterSeq);
  const sse = openSse(request, reply, {
    pingIntervalMs: streams.pingIntervalMs, bufferLimitBytes: streams.bufferLimitBytes, stopping: deps.stopping,
    // The id line keeps a browser's EventSource on the same resume point when it reconnects.
    shutdownFrame: () => ({ id: resumeFrom, event: 'error', data: JSON.stringify(shutdownNotice(plan.taskId, resumeFrom)) }),
  });
  const idle = createInactivityTimer(streams.inactivityTimeoutMs, AbortSignal.any([sse.signal, lease.revoked]));
  try {
    sse.comment(`connected to workflow ${plan.taskId}`);
    let fellBehindAt: TaskEvent | undefined;
    await deliverTaskEventBatches(deps.db, deps.events, plan.taskId, { afterSeq: plan.afterSeq, types: plan.types, signal: idle.signal, logger: deps.logger }, (events) => {
      idle.touch();
      const last = events.at(-1)!;
      resumeFrom = last.stream_id;
      const written = sse.sendEncoded(events.map(encodedSseFrame));
      if (written === true) return true;
      if (written === false) {
        fellBehindAt = last;
        return false;
      }
      return written.then((isWritten) => {
        if (!isWritten) fellBehindAt = last;
        return isWritten;
      });
    });
    if (fellBehindAt) {
      // Too far behind: end with an error the client can act on instead of buffering without bound.
      await sse.send({ event: 'error', data: JSON.stringify(fellBehindNotice(plan.taskId, fellBehindAt.seq, fellBehindAt.stream_id, streams.bufferLimitBytes)) });
    }
    if (idle.expired) sse.comment('closing after inactivity');
    if (lease.revoked.aborted) {
      await sse.send({ event: 'error', data: JSON.stringify({ type: 'ERROR_OCCURRED', workflow_id: plan.taskId, code: 'credential_revoked', message: lease.revoked.reason }) });
    }
  } catch (error) {
    request.log.error({ err: error, task_id: plan.taskId }, 'event stream failed');
    await sse.send({ event: 'error', data: JSON.stringify({ type: 'ERROR_OCCURRED', workflow_id: plan.taskId, message: 'event stream failed' }) });
  } finally {
    idle.dispose();
    lease.release();
    sse.end();
  }
}
