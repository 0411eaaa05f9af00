import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { prepareTaskStream, type StreamPlan } from './prepare-stream.ts';
import { SseQuery, StreamQuery } from './schemas.ts';
import { serveSseStream } from './serve-sse.ts';
import { serveWebSocketStream } from './serve-websocket.ts';
import type { StreamLease } from './stream-slots.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };

declare module 'fastify' {
  interface FastifyRequest { streamPlan?: StreamPlan; streamLease?: StreamLease }
}

/** Task event streams (spec 4.5, 6): replay from the log, then live, over SSE or WebSocket. */
export async function streamingRoutes(app: App, deps: Deps) {
  const plan = async (request: FastifyRequest<{ Querystring: { workflow_id?: string; types?: string; last_event_id?: string } }>, reply: FastifyReply) => {
    const header = request.headers['last-event-id'];
    request.streamPlan = await prepareTaskStream(deps, request.caller, {
      workflowId: request.query.workflow_id,
      lastEventId: (typeof header === 'string' && header.trim() !== '' ? header : undefined) ?? request.query.last_event_id,
      types: request.query.types,
    });
    request.streamLease = await deps.streamSlots.open(request, reply);
  };

  app.get('/api/v1/stream/sse', {
    config: { queryApiKey: true, scope: 'tasks:read' },
    schema: {
      tags: ['streaming'], summary: 'Task events over Server-Sent Events, with replay',
      querystring: SseQuery, response: { 200: { type: 'string', description: 'text/event-stream' }, ...errors },
    },
    preHandler: plan,
  }, async (request, reply) => serveSseStream(deps, request, reply, request.streamPlan!, request.streamLease!));

  // A plain GET (no Upgrade) gets 426; declaring both handlers keeps the route in the OpenAPI document.
  app.route({
    method: 'GET',
    url: '/api/v1/stream/ws',
    config: { scope: 'tasks:read' },
    schema: {
      tags: ['streaming'], summary: 'Task events over WebSocket, with replay (connect with Upgrade: websocket)',
      querystring: StreamQuery, response: { ...errors, 426: ErrorBody },
    },
    preHandler: plan,
    wsHandler: (socket, request) => {
      request.raw.socket.setTimeout(0);
      return serveWebSocketStream(deps, socket, request.streamPlan!, request.streamLease!);
    },
    handler: async () => {
      throw new AppError(426, 'Upgrade Required: this route serves WebSocket connections', { headers: { upgrade: 'websocket' } });
    },
  });
}
