import { calculatorTool } from './calculator.ts';
import { createToolRegistry } from './create-registry.ts';
import type { ToolDefinition, ToolRegistry } from './registry.ts';

/** Every tool this server ships with; later issues add web search, fetch, files… here. */
export const BUILT_IN_TOOLS: readonly ToolDefinition[] = [calculatorTool];

export function createBuiltInToolRegistry(): ToolRegistry {
  return createToolRegistry([...BUILT_IN_TOOLS]);
}
