import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { clientGoneSignal } from '../http/client-gone-signal.ts';
import { ErrorBody } from '../http/error-body.ts';
import { findDirectTool, listDirectTools, toToolSummary } from './direct-tools.ts';
import { executeTool } from './execute-tool.ts';
import { ExecuteToolBody, ExecuteToolResponse, ListToolsQuery, ListToolsResponse, ToolDetail, ToolNameParams } from './schemas.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };

/** The tools API that Shannon's SDK calls (`list_tools`, `get_tool`, `execute_tool`; reference §9.2). */
export async function toolRoutes(app: App, deps: Deps) {
  app.get('/api/v1/tools', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['tools'], summary: 'List the tools a client may call directly (the dangerous ones are left out)', querystring: ListToolsQuery, response: { 200: ListToolsResponse, ...errors } },
  }, async (request) => ({ tools: listDirectTools(deps, request.caller, request.query.category).map(toToolSummary) }));

  app.get('/api/v1/tools/:name', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['tools'], summary: 'One tool: its description and the JSON schema of its arguments', params: ToolNameParams, response: { 200: ToolDetail, ...errors } },
  }, async (request) => ({ ...toToolSummary(findDirectTool(deps, request.caller, request.params.name)), version: deps.config.version }));

  app.post('/api/v1/tools/:name/execute', {
    config: { scope: 'tasks:write' },
    schema: {
      tags: ['tools'], summary: 'Run a tool once, outside any task; its cost is recorded as the caller\'s usage',
      params: ToolNameParams, body: ExecuteToolBody, response: { 200: ExecuteToolResponse, 503: ErrorBody, ...errors },
    },
  }, async (request, reply) =>
    executeTool(deps, request.caller, request.params.name, request.body, AbortSignal.any([clientGoneSignal(reply), deps.handingOver]), request.traceContext));
}
