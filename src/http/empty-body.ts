import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The content type a body-less request declared, kept when the header is dropped (see session-files.ts `wantsJsonFile`). */
    bodylessContentType?: string;
  }
}

/**
 * A request that declares a content type but carries no body has no body: some clients (Shannon's SDK
 * among them) send `Content-Type: application/json` on every call, body-less DELETE and POST included.
 * Without this, the JSON parser answers 400 for the empty text; with it, a route whose body is optional
 * runs as if none was sent, and one that needs a body answers its own 400.
 */
export function installEmptyBodyAsAbsent(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const { headers } = request.raw;
    const empty = headers['transfer-encoding'] === undefined && (headers['content-length'] === undefined || headers['content-length'] === '0');
    if (empty && headers['content-type'] !== undefined) {
      request.bodylessContentType = headers['content-type'];
      delete headers['content-type'];
    }
  });
}

/** A route's `preValidation` when its body is optional: no body at all is `{}`, validated like any other. */
export const optionalBody = async (request: { body: unknown }) => { request.body ??= {}; };
