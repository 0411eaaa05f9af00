import type { FastifyInstance } from 'fastify';
import { unauthorized } from '../errors.ts';

export type Role = 'owner' | 'admin' | 'member';

/** Who is calling: passed explicitly to every service and query that touches data (STYLE.md §2). */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  scopes: string[];
}

export const DEVELOPMENT_CALLER: Caller = Object.freeze({
  tenantId: '00000000-0000-0000-0000-000000000001',
  userId: '00000000-0000-0000-0000-000000000002',
  role: 'owner',
  scopes: ['*'],
}) as Caller;

declare module 'fastify' {
  interface FastifyRequest { caller: Caller }
  interface FastifyContextConfig {
    /** The route needs no caller (probes). */
    public?: boolean;
    /** The route also accepts the `api_key` query parameter (SSE only, spec 5.5). */
    queryApiKey?: boolean;
  }
}

/**
 * Every route requires a caller unless its config says `public: true` (the probes).
 * With skip-auth every request runs as the development user. Credential checks (API keys, JWT)
 * arrive with the authentication issue; until then a gateway without skip-auth admits nobody.
 */
export function installAuthentication(app: FastifyInstance, options: { skipAuth: boolean }): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public) return;
    if (!options.skipAuth) throw unauthorized();
    request.caller = DEVELOPMENT_CALLER;
  });
}
