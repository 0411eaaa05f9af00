import type { Context } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { callerTraceContext, traceIdOf } from '../observability/trace-carrier.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's W3C trace context (spec 5.12), when it sent a valid one: the parent of the spans the request starts. */
    traceContext?: Context;
  }
}

/** A valid `traceparent` puts its trace id in the request's logs and becomes the parent of its spans; an invalid one is ignored. */
export function installTraceContext(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const incoming = callerTraceContext(request.headers);
    if (!incoming) return;
    request.traceContext = incoming;
    request.log = request.log.child({ trace_id: traceIdOf(incoming) });
  });
}
