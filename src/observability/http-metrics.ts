import type { FastifyInstance } from 'fastify';
import { httpRequestDuration, httpRequests } from './metrics.ts';

/** The route label of a request no route matched: one label, whatever URLs clients (or scanners) try. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts every answered request and times it, labelled by the route pattern. A callback hook rather than an
 * async one: it runs for every request, and needs no promise.
 */
export function installHttpMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    httpRequests.inc({ method: request.method, route, status_code: reply.statusCode });
    httpRequestDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
}
