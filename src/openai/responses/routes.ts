import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.ts';
import { badRequest } from '../../errors.ts';
import type { App } from '../../http/app-type.ts';
import { installOpenAiErrorHandler } from '../errors.ts';
import { OpenAiErrorBody } from '../schemas.ts';
import { createResponse } from './create-response.ts';
import { cancelResponse, deleteResponse, listInputItems } from './manage-response.ts';
import { findOwnedResponse } from './queries.ts';
import { readResponseView } from './response-view.ts';
import { DeletedResponse, InputItemList, InputItemsQuery, ResponseCreateBody, ResponseIdParams, ResponseObject, ResponseRetrieveQuery } from './schemas.ts';
import { streamResponse } from './stream-response.ts';

const errors = { 400: OpenAiErrorBody, 401: OpenAiErrorBody, 403: OpenAiErrorBody, 404: OpenAiErrorBody, 429: OpenAiErrorBody, 500: OpenAiErrorBody };
const tags = ['openai'];

/** The OpenAI Responses API (issue 31), in its own plugin scope with the OpenAI error envelope. */
export async function openAiResponseRoutes(app: App, deps: Deps) {
  await app.register(async (plugin) => {
    installOpenAiErrorHandler(plugin as unknown as FastifyInstance);
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();

    scope.post('/v1/responses', {
      // A stream cannot be replayed from a stored answer; a retry with the same key gets the same task and response.
      config: { ownRateLimit: true, scope: 'tasks:write', replayAnswer: (request) => (request.body as { stream?: boolean } | undefined)?.stream !== true },
      schema: {
        tags, summary: 'Create a response (a durable task): at once with background, streamed as typed events, or when done',
        body: ResponseCreateBody, response: { 200: ResponseObject, ...errors },
      },
    }, async (request, reply) => createResponse(deps, request, reply));

    scope.get('/v1/responses/:responseId', {
      config: { scope: 'tasks:read' },
      schema: {
        tags, summary: 'A response; with stream=true its typed events, from after starting_after, from any process',
        params: ResponseIdParams, querystring: ResponseRetrieveQuery, response: { 200: ResponseObject, ...errors },
      },
    }, async (request, reply) => {
      const { stream, starting_after: startingAfter, include, include_obfuscation: obfuscation } = request.query;
      if (include !== undefined && include.length > 0) throw badRequest('include can only be empty: no extra output data is available');
      if (obfuscation === true) throw badRequest('include_obfuscation is not supported: stream events carry no obfuscation padding');
      const record = await findOwnedResponse(deps, request.caller, request.params.responseId);
      if (!stream) return readResponseView(deps, record);
      const lease = await deps.streamSlots.open(request, reply);
      return streamResponse(deps, request, reply, { lease, record, startingAfter: startingAfter ?? -1 }).then(() => undefined);
    });

    scope.post('/v1/responses/:responseId/cancel', {
      config: { scope: 'tasks:write', replayAnswer: false },
      schema: { tags, summary: 'Cancel a background response', params: ResponseIdParams, response: { 200: ResponseObject, ...errors } },
    }, async (request) => cancelResponse(deps, request.caller, request.params.responseId));

    scope.delete('/v1/responses/:responseId', {
      config: { scope: 'tasks:write' },
      schema: { tags, summary: 'Delete a response: it can no longer be read or continued', params: ResponseIdParams, response: { 200: DeletedResponse, ...errors } },
    }, async (request) => deleteResponse(deps, request.caller, request.params.responseId));

    scope.get('/v1/responses/:responseId/input_items', {
      config: { scope: 'tasks:read' },
      schema: {
        tags, summary: 'The input items of a response, paged by item id',
        params: ResponseIdParams, querystring: InputItemsQuery, response: { 200: InputItemList, ...errors },
      },
    }, async (request) => {
      if (request.query.include !== undefined && request.query.include.length > 0) throw badRequest('include can only be empty: no extra output data is available');
      return listInputItems(deps, request.caller, request.params.responseId, request.query);
    });
  });
}
