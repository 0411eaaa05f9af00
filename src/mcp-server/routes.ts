import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';

/**
 * agentgate as an MCP server (streamable HTTP, stateless: see docs/decisions.md, issue 34). Each POST gets a server
 * of its own, bound to the caller the API key (or token) authenticated, so every tool and resource is scoped like
 * the REST API. Left out of /openapi.json: its contract is the MCP one, which clients discover with tools/list.
 * The MCP SDK loads at the first request (mcp-request.ts): loaded at start-up, it was about a twelfth of its modules.
 */
export async function mcpRoutes(app: App, deps: Deps) {
  app.post('/mcp', {
    // The MCP answer is a stream: the Idempotency-Key replay of whole answers does not apply (submit_task has its own key).
    config: { scope: 'tasks:read', replayAnswer: false },
    schema: { hide: true },
  }, async (request, reply) => {
    const { answerMcpRequest } = await import('./mcp-request.ts');
    // Headers the hooks set (CORS, the request id) go out with the transport's answer.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    // A tool call's answer may stream for as long as wait_for_task waits: no idle limit on its socket.
    request.raw.socket.setTimeout(0);
    await answerMcpRequest(deps, request.caller, request.raw, reply.raw, request.body);
  });

  // Stateless: no stream of server-initiated messages to open, and no session to end.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method, url: '/mcp', config: { scope: 'tasks:read' }, schema: { hide: true },
      handler: async (_request, reply) => reply.status(405).header('allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless; POST requests to /mcp' }, id: null }),
    });
  }
}
