/**
 * The roles a lead may give an agent: the presets whose tools act on nothing (search, read, reason). Roles with
 * files, code or shells wait for approvals to reach swarm turns; until then the lead is refused them by name.
 */
export const SWARM_ROLES = ['research', 'analysis', 'generalist', 'writer', 'critic'] as const;
export const DEFAULT_SWARM_ROLE = 'research';

export const isSwarmRole = (role: string): boolean => (SWARM_ROLES as readonly string[]).includes(role);
