import { toolCallDuration, toolCalls } from '../observability/metrics.ts';
import type { ToolOutcome, ToolRegistry } from './registry.ts';

/** The label of a name no tool has: the model may ask for any name, and labels must stay bounded. */
const UNKNOWN_TOOL = 'unknown';

/**
 * Runs one call and counts it by outcome: ok, error (the tool failed, or refused its input), aborted (a
 * cancel, a deadline, a request that went away: the call throws).
 */
export async function countToolCall(tool: string | undefined, run: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const label = tool ?? UNKNOWN_TOOL;
  const startedAt = performance.now();
  try {
    const outcome = await run();
    toolCalls.inc({ tool: label, outcome: outcome.error === undefined ? 'ok' : 'error' });
    return outcome;
  } catch (error) {
    toolCalls.inc({ tool: label, outcome: 'aborted' });
    throw error;
  } finally {
    toolCallDuration.observe({ tool: label }, (performance.now() - startedAt) / 1000);
  }
}

/** A call an agent asked for that may not run: not allowed for its role, or no such tool. */
export function countRefusedToolCall(tools: ToolRegistry, name: string): void {
  toolCalls.inc({ tool: tools.get(name) ? name : UNKNOWN_TOOL, outcome: 'refused' });
}
