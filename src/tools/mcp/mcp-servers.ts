import type { Logger } from 'pino';
import type { ToolDefinition } from '../registry.ts';
import { loadMcpConfig } from './mcp-config.ts';
import { openMcpServer } from './mcp-server.ts';

export interface McpServers {
  /** The tools of every connected server, as they are now. */
  tools(): ToolDefinition[];
  close(): Promise<void>;
}

/**
 * Starts connecting to the servers of the MCP config file; none of them holds up start-up. An HTTP server's
 * answers are read up to `maxAnswerBytes` each (TOOLS_FETCH_MAX_BYTES).
 */
export function startMcpServers(configFile: string, logger: Logger, maxAnswerBytes: number): McpServers {
  const servers = loadMcpConfig(configFile).map((spec) => openMcpServer(spec, logger, maxAnswerBytes));
  return {
    tools: () => servers.flatMap((server) => server.tools()),
    close: async () => { await Promise.all(servers.map((server) => server.close())); },
  };
}
