import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { App } from '../http/app-type.ts';

/** The console's build, committed (`npm run build:console` makes it from console/src). */
export const CONSOLE_DIST = path.resolve(import.meta.dirname, '../../console/dist');

/**
 * Only files from this origin run or load: no inline script or style, no framing. The console talks to the
 * API on the same origin, so connect-src 'self' is all it needs.
 */
export const CONSOLE_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "font-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

/**
 * Hashed names change with their content, so they can be cached for good; the page itself never is. Scripts
 * and stylesheets go out as the build's .br or .gz when the browser accepts one (preCompressed).
 */
const ASSET_CACHE = { maxAge: '365d', immutable: true };
const PAGE_CACHE = { cacheControl: false };

/**
 * The web console at /console (and / leads there): its assets as files, and every other /console/* path answers
 * with the page, whose own router reads the path (so a task's link can be opened directly or reloaded).
 */
export async function consoleRoutes(app: App): Promise<void> {
  const built = existsSync(path.join(CONSOLE_DIST, 'index.html'));
  if (built) await app.register(fastifyStatic, { root: CONSOLE_DIST, serve: false, preCompressed: true });
  const route = { config: { public: true }, schema: { hide: true } } as const;

  // Someone who opens the server's address in a browser lands on the console rather than on a 404.
  for (const url of ['/', '/console']) app.get(url, route, async (_request, reply) => reply.redirect('/console/'));
  app.get('/console/*', route, async (request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');
    if (!built) return reply.status(503).send({ error: 'The console is not built: run npm run build:console' });
    const wanted = (request.params as { '*': string })['*'];
    if (wanted.startsWith('assets/')) return sendAsset(reply, wanted);
    return sendPage(reply);
  });
}

function sendAsset(reply: FastifyReply, wanted: string): FastifyReply {
  // Asset names are the bundler's: letters, digits, - _ and one extension. Anything else is not one of ours.
  if (!/^assets\/[A-Za-z0-9_-]+\.[a-z0-9]+$/.test(wanted) || !existsSync(path.join(CONSOLE_DIST, wanted))) {
    return reply.status(404).send({ error: 'Not found' });
  }
  return reply.sendFile(wanted, ASSET_CACHE);
}

function sendPage(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-cache').sendFile('index.html', PAGE_CACHE);
}
