import type { ToolRegistry } from '../../tools/registry.ts';
import { DEFAULT_ROLE, findRolePreset } from './role-presets.ts';

/**
 * The tools a role may call (spec 2.3): its preset's list, or for a preset of `all` every tool of the tenant that
 * is not dangerous (files, code, shells are for the roles that name them, as in the reference).
 */
export function allowedToolNames(tools: ToolRegistry, tenantId: string, role: string): string[] {
  const preset = findRolePreset(role) ?? findRolePreset(DEFAULT_ROLE)!;
  return preset.tools === 'all' ? tools.list(tenantId).filter((tool) => !tool.dangerous).map((tool) => tool.name) : preset.tools;
}

/** Of those, the ones the tenant has here: what a planner may suggest and an agent is offered. */
export function availableToolNames(tools: ToolRegistry, tenantId: string, role: string): string[] {
  return allowedToolNames(tools, tenantId, role).filter((name) => tools.find(name, tenantId) !== undefined);
}
