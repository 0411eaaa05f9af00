import type { Me } from '../api/client';

/** Whether the caller may manage API keys at all (the gateway's `keys:manage` scope; owners and admins hold every scope). */
export function canManageKeys(me: Me): boolean {
  return me.scopes.includes('*') || me.scopes.includes('keys:manage');
}
