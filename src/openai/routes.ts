import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import type { App } from '../http/app-type.ts';
import { answerWithTask } from './answer-with-task.ts';
import { toChatTask } from './chat-task.ts';
import { chatCompletionOf, textCompletionOf } from './completion.ts';
import { installOpenAiErrorHandler } from './errors.ts';
import { DEFAULT_SERVICE_MODEL, MODELS_CREATED, type ServiceModel } from './models.ts';
import { prepareImages } from './remote-images.ts';
import {
  ChatCompletionBody, ChatCompletionResponse, ModelList, ModelObject, ModelParams, OpenAiErrorBody, TextCompletionBody, TextCompletionResponse,
} from './schemas.ts';
import { findServedModel, servedModels } from './served-model.ts';
import { chatChunks, textChunks } from './stream-completion.ts';
import { refuseTextCompletionFields, toTextTask } from './text-completion.ts';
import { refuseUnsupportedFields } from './unsupported-fields.ts';

const errors = { 400: OpenAiErrorBody, 401: OpenAiErrorBody, 403: OpenAiErrorBody, 404: OpenAiErrorBody, 429: OpenAiErrorBody, 500: OpenAiErrorBody };

/** A streamed answer cannot be replayed from a stored one: a retry with the same key gets the same task instead. */
const isNotStreamed = (request: FastifyRequest) => (request.body as { stream?: boolean } | undefined)?.stream !== true;

/** The OpenAI-compatible layer (spec 4.11), with its own error envelope in its own plugin scope. */
export async function openAiRoutes(app: App, deps: Deps) {
  await app.register(async (plugin) => {
    installOpenAiErrorHandler(plugin as unknown as FastifyInstance);
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    const toModelObject = (model: ServiceModel) => ({ id: model.id, object: 'model' as const, created: MODELS_CREATED, owned_by: 'agentgate' });

    scope.get('/v1/models', {
      config: { scope: 'tasks:read' },
      schema: { tags: ['openai'], summary: 'Models: each selects a workflow', response: { 200: ModelList, ...errors } },
    }, async () => ({ object: 'list' as const, data: servedModels(deps).map(toModelObject) }));

    scope.get('/v1/models/:model', {
      config: { scope: 'tasks:read' },
      schema: { tags: ['openai'], summary: 'One model; its description is in X-Model-Description', params: ModelParams, response: { 200: ModelObject, ...errors } },
    }, async (request, reply) => {
      const model = findServedModel(deps, request.params.model);
      reply.header('x-model-description', model.description);
      return toModelObject(model);
    });

    scope.post('/v1/chat/completions', {
      config: { ownRateLimit: true, scope: 'tasks:write', replayAnswer: isNotStreamed },
      preValidation: async (request) => refuseUnsupportedFields(request.body),
      schema: { tags: ['openai'], summary: 'Chat completion, streaming or not, answered by a task', body: ChatCompletionBody, response: { 200: ChatCompletionResponse, ...errors } },
    }, async (request, reply) => {
      const { body } = request;
      const model = findServedModel(deps, body.model ?? DEFAULT_SERVICE_MODEL);
      const chat = toChatTask(body, model);
      if (chat.hasImages) await prepareImages(deps, chat.turn!.messages);
      return answerWithTask(deps, request, reply, {
        model, chat, stream: body.stream === true, includeUsage: body.stream_options?.include_usage === true, user: body.user,
        chunks: chatChunks(model.id), completionOf: (answer, usage) => chatCompletionOf(answer, usage, model.id),
      });
    });

    scope.post('/v1/completions', {
      config: { ownRateLimit: true, scope: 'tasks:write', replayAnswer: isNotStreamed },
      preValidation: async (request) => refuseTextCompletionFields(request.body),
      schema: { tags: ['openai'], summary: 'Text completion (the legacy API): the prompt answered by a task, streaming or not', body: TextCompletionBody, response: { 200: TextCompletionResponse, ...errors } },
    }, async (request, reply) => {
      const { body } = request;
      const model = findServedModel(deps, body.model ?? DEFAULT_SERVICE_MODEL);
      const chat = toTextTask(body);
      const echo = body.echo === true ? chat.query : '';
      return answerWithTask(deps, request, reply, {
        model, chat, stream: body.stream === true, includeUsage: body.stream_options?.include_usage === true, user: body.user,
        chunks: textChunks(model.id, echo), completionOf: (answer, usage) => textCompletionOf(answer, usage, model.id, echo),
      });
    });

    // Any other /v1 address (embeddings, audio, files, ...) is a 404 in this layer's envelope, as OpenAI answers one,
    // so that clients show its message. The routes above and the Responses API's are more specific and win.
    scope.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/v1/*', config: { public: true }, schema: { hide: true },
      handler: async (request) => {
        const message = `Invalid URL (${request.method} ${request.url.split('?')[0]}): the OpenAI-compatible API here serves /v1/models, /v1/chat/completions, /v1/completions and /v1/responses`;
        throw new AppError(404, message, { extras: { code: 'unknown_url' } });
      },
    });
  });
}
