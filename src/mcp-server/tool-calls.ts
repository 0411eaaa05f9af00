import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { hasScope, type Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { AppError, isAppError } from '../errors.ts';

/** A tool's answer: the JSON as text (what every client shows) and as structured content (what programs read). */
export function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/**
 * A tool or resource needs the scope its REST route needs: a key that may only read tasks submits none through
 * MCP either. The route at /mcp asks only for `tasks:read`.
 */
export function requireScope(caller: Caller, scope: string): void {
  if (!hasScope(caller, scope)) throw new AppError(403, `Forbidden: missing scope ${scope}`);
}

/**
 * Runs a tool's work: our errors (404, 403, 409 …) reach the client as the tool's error text, as the REST API
 * words them; anything else is logged and reported without its details.
 */
export function calling<Args extends unknown[], R>(deps: Deps, tool: string, work: (...args: Args) => Promise<R>): (...args: Args) => Promise<R> {
  return async (...args) => {
    try {
      return await work(...args);
    } catch (error) {
      if (isAppError(error)) throw error;
      deps.logger.error({ err: error, tool }, 'MCP tool failed');
      throw new Error('Internal server error');
    }
  };
}
