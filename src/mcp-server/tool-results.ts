import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A tool's answer: the JSON as text (what every client shows) and as structured content (what programs read). */
export function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
