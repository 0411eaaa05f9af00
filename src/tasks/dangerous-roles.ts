import { hasScope, type Caller } from '../auth/caller.ts';
import { forbidden } from '../errors.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { allowedToolNames } from '../workflows/agent-calls/role-tools.ts';

export const DANGEROUS_TOOLS_SCOPE = 'tools:dangerous';

/**
 * 403 for a task that chooses a role offering a dangerous tool (files, code, shells: developer, data_analytics)
 * without the `tools:dangerous` scope, which owners and admins have and members cannot be given (issue 25).
 * Approvals still apply to those tools; the scope decides who may ask for them at all.
 */
export function refuseDangerousRole(tools: ToolRegistry, caller: Caller, context: Record<string, unknown>): void {
  if (typeof context.role !== 'string' || hasScope(caller, DANGEROUS_TOOLS_SCOPE)) return;
  const dangerous = allowedToolNames(tools, caller.tenantId, context.role).filter((name) => tools.find(name, caller.tenantId)?.dangerous === true);
  if (dangerous.length === 0) return;
  throw forbidden(`Forbidden: role ${context.role} offers dangerous tools (${dangerous.join(', ')}); choosing it needs the ${DANGEROUS_TOOLS_SCOPE} scope`);
}
