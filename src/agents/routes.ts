import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { idempotentResourceId } from '../http/idempotency.ts';
import { syncAgents } from './agent-sync.ts';
import { toAgentView } from './agent-view.ts';
import { executeAgent, findAgent } from './execute-agent.ts';
import {
  AgentIdParams, AgentSyncResponse, AgentView, AvatarPresetsResponse, ExecuteAgentBody, ExecuteAgentResponse, ListAgentsResponse,
} from './schemas.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };

/** The single-purpose agents (spec 4.9, reference §8.2): the catalogue, its tenant mirror, and running one. */
export async function agentRoutes(app: App, deps: Deps) {
  app.get('/api/v1/agents', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['agents'], summary: 'The agent catalogue, sorted by id', response: { 200: ListAgentsResponse, ...errors } },
  }, async () => {
    const agents = deps.agents.list().map(toAgentView);
    return { agents, count: agents.length };
  });

  // Registered before /agents/:id, which would otherwise take these paths for ids; Fastify prefers static parts anyway.
  app.get('/api/v1/agents/avatars/presets', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['agents'], summary: 'Avatar presets for agents, from server configuration', response: { 200: AvatarPresetsResponse, ...errors } },
  }, async () => ({ presets: deps.agents.avatarPresets }));

  app.get('/api/v1/agents/sync', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['agents'], summary: 'The tenant\'s mirror of the catalogue; removed agents are tombstones', response: { 200: AgentSyncResponse, ...errors } },
  }, async (request) => syncAgents(deps, request.caller));

  app.get('/api/v1/agents/:id', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['agents'], summary: 'One agent', params: AgentIdParams, response: { 200: AgentView, ...errors } },
  }, async (request) => toAgentView(findAgent(deps, request.params.id)));

  app.post('/api/v1/agents/:id', {
    config: { scope: 'tasks:write' },
    schema: {
      tags: ['agents'], summary: 'Run an agent on an input: a task that runs its tool, with no planning',
      params: AgentIdParams, body: ExecuteAgentBody, response: { 202: ExecuteAgentResponse, ...errors, 413: ErrorBody },
    },
  }, async (request, reply) => {
    const submitted = await executeAgent(deps, request.caller, request.params.id, request.body, { taskId: idempotentResourceId(request), traceContext: request.traceContext });
    reply.status(202).headers({ 'x-workflow-id': submitted.taskId, 'x-session-id': submitted.session.publicId });
    return { task_id: submitted.taskId, agent_id: request.params.id, status: 'STATUS_CODE_OK', created_at: submitted.createdAt.toISOString() };
  });
}
