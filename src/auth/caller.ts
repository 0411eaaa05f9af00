export type Role = 'owner' | 'admin' | 'member';
/** How the caller proved who they are; `schedule`: a run of a schedule, acting as its owner. */
export type AuthMethod = 'api_key' | 'jwt' | 'development' | 'schedule';

/** Who is calling: passed explicitly to every service and query that touches data (STYLE.md §2). */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  scopes: readonly string[];
  authMethod: AuthMethod;
  /** Set when the request authenticated with an API key. */
  apiKeyId?: string;
}

export const DEVELOPMENT_CALLER: Caller = Object.freeze({
  tenantId: '00000000-0000-0000-0000-000000000001',
  userId: '00000000-0000-0000-0000-000000000002',
  role: 'owner',
  scopes: ['*'],
  authMethod: 'development',
});

/**
 * Scope names. `*` grants all; `skills:dangerous` is needed for dangerous skills (spec 5.9), `tools:dangerous` to
 * choose a role whose tools include a dangerous one (issue 25). Neither is a member's, nor grantable to one.
 */
export const SCOPES = ['tasks:read', 'tasks:write', 'sessions:read', 'sessions:write', 'keys:manage', 'skills:dangerous', 'tools:dangerous'] as const;
export const DEFAULT_KEY_SCOPES = ['tasks:read', 'tasks:write', 'sessions:read', 'sessions:write'];

export function hasScope(caller: Caller, scope: string): boolean {
  return caller.scopes.includes('*') || caller.scopes.includes(scope);
}

/** Scopes a signed-in user (JWT) has: owners and admins everything, members the defaults. */
export const scopesForRole = (role: Role): string[] => (role === 'member' ? [...DEFAULT_KEY_SCOPES, 'keys:manage'] : ['*']);

/** What a key may do: its own scopes, bounded by its user's current role (a demoted admin's keys shrink). */
export function scopesWithinRole(keyScopes: readonly string[], role: Role): string[] {
  const allowed = scopesForRole(role);
  if (allowed.includes('*')) return [...keyScopes];
  return keyScopes.includes('*') ? allowed : keyScopes.filter((scope) => allowed.includes(scope));
}

export const isAdmin = (caller: Caller) => caller.role === 'owner' || caller.role === 'admin';

const ROLE_RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };
export const outranks = (role: Role, other: Role) => ROLE_RANK[role] > ROLE_RANK[other];

/**
 * A stable key for per-credential limits: the API key, else the user. A signed-in user has one bucket
 * whichever of their tenants they act in.
 */
export const credentialKey = (caller: Caller) => caller.apiKeyId ? `key:${caller.apiKeyId}` : `user:${caller.userId}`;

declare module 'fastify' {
  interface FastifyRequest { caller: Caller }
  interface FastifyContextConfig {
    /** The route needs no caller (probes, login). */
    public?: boolean;
    /** The route also accepts the `api_key` query parameter (SSE only, spec 5.5). */
    queryApiKey?: boolean;
    /** The scope a caller needs for this route. */
    scope?: string;
    /** The route applies its own rate limits (the OpenAI layer) instead of the native one. */
    ownRateLimit?: boolean;
  }
}
