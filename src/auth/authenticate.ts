import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { AppError, isAppError, tooManyRequests } from '../errors.ts';
import { countHit, secondsUntilReset } from '../http/fixed-window.ts';
import { isUuid } from '../uuid.ts';
import { recordAudit } from './audit.ts';
import { looksLikeApiKey } from './api-key-secret.ts';
import { DEVELOPMENT_CALLER, hasScope, type Caller } from './caller.ts';
import { authenticationError, resolveCaller, type Credential } from './resolve-credential.ts';

declare module 'fastify' {
  /** What the caller authenticated with: long-lived connections check it again later. */
  interface FastifyRequest { credential?: Credential }
}

/**
 * Every route requires a caller unless its config says `public: true` (spec 5.4); routes added later
 * get this by default. With skip-auth (development only) every request runs as the development user.
 */
export function installAuthentication(app: FastifyInstance, deps: Deps): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('credential', undefined);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public) return;
    if (deps.config.skipAuth) {
      request.caller = DEVELOPMENT_CALLER;
      return;
    }
    try {
      const credential = extractCredential(request);
      if (!credential) throw authenticationError('Authentication required');
      request.caller = await resolveCaller(deps.db, deps.config, credential, tenantHeader(request));
      request.credential = credential;
    } catch (error) {
      if (isAppError(error)) await throttleDenials(deps, request, error);
      throw error;
    }
  });
  app.addHook('preHandler', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope && request.caller && !hasScope(request.caller, scope)) throw new AppError(403, `Forbidden: missing scope ${scope}`);
  });
}

/**
 * Denied requests are counted per IP: the first of each minute is audited (one row, not one per request),
 * and past the per-IP allowance the answer is 429 instead of 401/403.
 */
async function throttleDenials(deps: Deps, request: FastifyRequest, error: AppError): Promise<void> {
  const window = await countHit(deps.db, `denied:${request.ip}`, 60);
  if (window.count === 1) {
    await recordAudit(deps.db, { type: 'auth_denied', ip: request.ip, details: { status: error.statusCode, reason: error.message, route: request.routeOptions.url ?? null } });
  }
  if (window.count > deps.config.auth.loginAttemptsPerIp) {
    throw tooManyRequests(secondsUntilReset(window), 'Too many unauthenticated requests from this address');
  }
}

/** X-API-Key, or Authorization: Bearer (key or access token); `api_key` in the query only where allowed (SSE). */
function extractCredential(request: FastifyRequest): Credential | undefined {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return { kind: 'api_key', value: apiKey.trim() };
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && authorization !== '') {
    const token = bearerToken(authorization);
    if (!token) throw authenticationError('Unauthorized');
    return { kind: looksLikeApiKey(token) || token.startsWith('sk_') ? 'api_key' : 'jwt', value: token };
  }
  const queryKey = (request.query as Record<string, unknown> | undefined)?.api_key;
  if (request.routeOptions.config.queryApiKey && typeof queryKey === 'string' && queryKey !== '') return { kind: 'api_key', value: queryKey };
  return undefined;
}

/** The token of an `Authorization: Bearer <token>` header; undefined for a missing header or any other form. */
export function bearerToken(authorization: unknown): string | undefined {
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

function tenantHeader(request: FastifyRequest): string | undefined {
  const value = request.headers['x-tenant-id'];
  if (value === undefined || value === '') return undefined;
  if (!isUuid(value)) {
    throw new AppError(403, 'Forbidden: not a member of this tenant');
  }
  return value.toLowerCase();
}
