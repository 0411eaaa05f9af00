import type { ToolRegistry } from '../../tools/registry.ts';
import { DEFAULT_ROLE, findRolePreset } from './role-presets.ts';
import type { AgentTools } from './tool-loop.ts';

/**
 * The tools a role may call (spec 2.3): its preset's list, or for a preset of `all` every tool of the tenant that
 * is not dangerous (files, code, shells are for the roles that name them, as in the reference) and not kept for the
 * roles that name it (`namedOnly`: the single-purpose agents' tools).
 */
export function allowedToolNames(tools: ToolRegistry, tenantId: string, role: string): string[] {
  const preset = findRolePreset(role) ?? findRolePreset(DEFAULT_ROLE)!;
  return preset.tools === 'all' ? tools.list(tenantId).filter((tool) => !tool.dangerous && !tool.namedOnly).map((tool) => tool.name) : preset.tools;
}

/** Of those, the ones the tenant has here: what a planner may suggest and an agent is offered. */
export function availableToolNames(tools: ToolRegistry, tenantId: string, role: string): string[] {
  return allowedToolNames(tools, tenantId, role).filter((name) => tools.find(name, tenantId) !== undefined);
}

/**
 * The tool set an agent of this role carries: the tools of `allowed` (default the role's) the tenant has here. The
 * agent offers and runs exactly these; a model that asks for another is told it is not allowed, or not available
 * when the role allows it but this deployment does not have it for the tenant.
 */
export function roleToolSet(tools: ToolRegistry, tenantId: string, role: string, allowed = allowedToolNames(tools, tenantId, role)): AgentTools {
  const offered = allowed.flatMap((name) => tools.find(name, tenantId) ?? []);
  return { role, allowed, offered };
}
