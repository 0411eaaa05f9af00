import type { ToolRegistry } from '../../tools/registry.ts';
import { DEFAULT_ROLE, findRolePreset } from './role-presets.ts';

/**
 * The tools a role may call (spec 2.3): its preset's list, or for a preset of `all` every registered tool that
 * is not dangerous (files, code, shells are for the roles that name them, as in the reference).
 */
export function allowedToolNames(tools: ToolRegistry, role: string): string[] {
  const preset = findRolePreset(role) ?? findRolePreset(DEFAULT_ROLE)!;
  return preset.tools === 'all' ? tools.list().filter((tool) => !tool.dangerous).map((tool) => tool.name) : preset.tools;
}

/** Of those, the ones this deployment has: what a planner may suggest and an agent is offered. */
export function availableToolNames(tools: ToolRegistry, role: string): string[] {
  return allowedToolNames(tools, role).filter((name) => tools.get(name) !== undefined);
}
