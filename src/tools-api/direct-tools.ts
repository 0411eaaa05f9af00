import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { forbidden, notFound } from '../errors.ts';
import type { ToolDefinition } from '../tools/registry.ts';

/**
 * The tools a client may call directly, outside any task (reference §9.2): those of the caller's tenant but the
 * dangerous ones, which run only within a task, under its approval policy.
 */
export function listDirectTools(deps: Pick<Deps, 'tools'>, caller: Caller, category?: string): ToolDefinition[] {
  return deps.tools.list(caller.tenantId).filter((tool) => !tool.dangerous && (!category || tool.category === category));
}

/** 404 for an unknown tool (one the caller's tenant may not use is one), 403 for a dangerous one (Shannon's messages). */
export function findDirectTool(deps: Pick<Deps, 'tools'>, caller: Caller, name: string): ToolDefinition {
  const tool = deps.tools.find(name, caller.tenantId);
  if (!tool) throw notFound(`Tool '${name}' not found`);
  if (tool.dangerous) throw forbidden('Tool not available via direct execution: it runs only within a task, under its approval policy');
  return tool;
}

export function toToolSummary(tool: ToolDefinition) {
  return { name: tool.name, description: tool.description, category: tool.category, parameters: tool.parameters as Record<string, unknown>, cost_per_use: tool.costPerUseUsd };
}
