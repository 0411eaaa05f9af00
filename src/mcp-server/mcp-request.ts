import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { registerResources } from './resources.ts';
import { registerSessionTools } from './session-tools.ts';
import { registerTaskTools } from './task-tools.ts';

/** Answers one MCP POST on the raw response (already hijacked) with a server of its own, bound to the caller. */
export async function answerMcpRequest(deps: Deps, caller: Caller, request: IncomingMessage, response: ServerResponse, body: unknown): Promise<void> {
  const server = createMcpServer(deps, caller);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}

function createMcpServer(deps: Deps, caller: Caller): McpServer {
  const server = new McpServer({ name: 'agentgate', version: deps.config.version }, {
    instructions: 'agentgate runs tasks (questions, research, teams of agents) durably. submit_task, then wait_for_task; '
      + 'read results and session files as resources.',
  });
  registerTaskTools(server, deps, caller);
  registerSessionTools(server, deps, caller);
  registerResources(server, deps, caller);
  return server;
}
