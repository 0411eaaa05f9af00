import type { Logger } from 'pino';
import type { ToolDefinition } from '../registry.ts';
import { loadMcpConfig } from './mcp-config.ts';
import type { McpServer } from './mcp-server.ts';

export interface McpServers {
  /** The tools of every connected server, as they are now. */
  tools(): ToolDefinition[];
  close(): Promise<void>;
}

/**
 * Starts connecting to the servers of the MCP config file; none of them holds up start-up. An HTTP server's
 * answers are read up to `maxAnswerBytes` each (TOOLS_FETCH_MAX_BYTES). The MCP client SDK loads only when the
 * file names a server: loaded at every start, it was about a twelfth of the modules.
 */
export function startMcpServers(configFile: string, logger: Logger, maxAnswerBytes: number): McpServers {
  const specs = loadMcpConfig(configFile);
  let servers: McpServer[] = [];
  const opening = specs.length === 0 ? Promise.resolve() : import('./mcp-server.ts').then(({ openMcpServer }) => {
    servers = specs.map((spec) => openMcpServer(spec, logger, maxAnswerBytes));
  }, (error: unknown) => logger.error({ err: error }, 'the MCP client could not be loaded: no MCP server is connected'));
  return {
    tools: () => servers.flatMap((server) => server.tools()),
    close: async () => {
      await opening;
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}
