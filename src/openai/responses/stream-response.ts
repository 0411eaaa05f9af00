import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { followTaskEvents } from '../../events/follow-events.ts';
import { openSse, type SseStream } from '../../events/sse.ts';
import type { StreamLease } from '../../streaming/stream-slots.ts';
import { isTerminal } from '../../task-state/statuses.ts';
import { readResponseTask, type ResponseRecord } from './queries.ts';
import { createResponseEventMapper, RESPONSE_SOURCE_EVENTS, type ResponseStreamEvent } from './response-events.ts';
import { readResponseView } from './response-view.ts';
import type { ResponseView } from './schemas.ts';

const KEEPALIVE_MS = 30_000;

export interface ResponseStreamOptions {
  lease: StreamLease;
  record: ResponseRecord;
  /** Events numbered up to this one are not sent (`starting_after`); -1 sends them all. */
  startingAfter: number;
  onFinished?: (final: ResponseView) => Promise<void>;
}

/**
 * Serves a response's typed events as SSE (`event: <type>`, `id: <sequence_number>`), replaying the task's log
 * from its start and following it live until it ends. A stream cut by the client, a shutdown or a crash is
 * resumed from any process with `GET /v1/responses/{id}?stream=true&starting_after=<last sequence_number>`.
 */
export async function streamResponse(deps: Deps, request: FastifyRequest, reply: FastifyReply, options: ResponseStreamOptions): Promise<void> {
  const sse = openSse(request, reply, {
    pingIntervalMs: KEEPALIVE_MS, pingComment: 'keepalive', bufferLimitBytes: deps.config.streams.bufferLimitBytes, stopping: deps.handingOver,
  });
  const mapper = createResponseEventMapper(options.record);
  const send = async (events: ResponseStreamEvent[]) => {
    for (const event of events) {
      if (event.sequence_number > options.startingAfter) await sse.send({ id: String(event.sequence_number), event: event.type, data: JSON.stringify(event) });
    }
  };
  try {
    await send(mapper.opening());
    const signal = AbortSignal.any([sse.signal, options.lease.revoked]);
    // A log past its retention (events.retentionDays) has no end to wait for: the response is told from the task alone.
    let ended = await isPastRetention(deps, options.record.taskId);
    const events = ended ? [] : followTaskEvents(deps.db, deps.events, options.record.taskId, { afterSeq: 0, types: RESPONSE_SOURCE_EVENTS, signal, logger: deps.logger });
    for await (const event of events) {
      if (event.type === 'STREAM_END') {
        ended = true;
        break;
      }
      await send(mapper.onTaskEvent(event));
    }
    if (!ended) {
      if (options.lease.revoked.aborted && !sse.signal.aborted) await sendRevoked(sse, mapper.peekSequenceNumber(), String(options.lease.revoked.reason));
      return;
    }
    const final = await readResponseView(deps, options.record);
    await send(mapper.closing(final));
    await options.onFinished?.(final);
  } finally {
    options.lease.release();
    sse.end();
  }
}

async function isPastRetention(deps: Deps, taskId: string): Promise<boolean> {
  const task = await readResponseTask(deps, taskId);
  if (!isTerminal(task.status)) return false;
  const end = await deps.db.selectFrom('task_events').select('seq').where('task_id', '=', taskId).where('type', '=', 'STREAM_END').executeTakeFirst();
  return end === undefined;
}

async function sendRevoked(sse: SseStream, sequenceNumber: number, message: string): Promise<void> {
  const event = { type: 'error', code: 'credential_revoked', message, param: null, sequence_number: sequenceNumber };
  await sse.send({ event: 'error', data: JSON.stringify(event) });
}
