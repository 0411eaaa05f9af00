import type { FastifyReply } from 'fastify';

/**
 * Aborted when the client goes away before its answer is sent. Not Fastify's `request.signal`: that follows
 * the request stream, which Node closes as soon as a body has been read, so it fires on every POST.
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}
