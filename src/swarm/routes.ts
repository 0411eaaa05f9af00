import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { SWARM_MESSAGE_BODY_LIMIT, SwarmMessageBody, SwarmMessageResponse, SwarmWorkflowParams } from './schemas.ts';
import { sendSwarmMessage } from './send-message.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 429: ErrorBody };

/** A human's messages to a running swarm (reference §3.3). */
export async function swarmRoutes(app: App, deps: Deps) {
  app.post('/api/v1/swarm/:workflowId/message', {
    config: { scope: 'tasks:write' },
    bodyLimit: SWARM_MESSAGE_BODY_LIMIT,
    schema: {
      tags: ['swarm'], summary: 'Send a message to a running swarm\'s lead',
      params: SwarmWorkflowParams, body: SwarmMessageBody, response: { 200: SwarmMessageResponse, ...errors },
    },
  }, async (request) => sendSwarmMessage(deps, request.caller, request.params.workflowId, request.body.message));
}
