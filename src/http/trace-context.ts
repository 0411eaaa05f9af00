import type { FastifyInstance } from 'fastify';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

declare module 'fastify' {
  interface FastifyRequest { traceId?: string }
}

/** W3C trace context (spec 5.12): a valid `traceparent` puts its trace id in the logs; invalid ones are ignored. */
export function parseTraceparent(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return undefined;
  return match[1];
}

export function installTraceContext(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const traceId = parseTraceparent(request.headers.traceparent);
    if (!traceId) return;
    request.traceId = traceId;
    request.log = request.log.child({ trace_id: traceId });
  });
}
