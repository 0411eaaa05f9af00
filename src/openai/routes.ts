import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../deps.ts';
import { AppError, serviceUnavailable } from '../errors.ts';
import type { App } from '../http/app-type.ts';
import { idempotentResourceId } from '../http/idempotency.ts';
import { submitTask } from '../tasks/submit-task.ts';
import { waitForTaskStatus } from '../tasks/wait-for-task.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { SERVED_MODES } from '../workflows/mode-table.ts';
import { resolveChatSession } from './chat-session.ts';
import { chatTaskContext, toChatTask } from './chat-task.ts';
import { answerTranscript, finishedCompletion, type TaskAnswer } from './completion.ts';
import { refuseUnsupportedFields } from './unsupported-fields.ts';
import { fetchRemoteImages } from './remote-images.ts';
import { requireVision } from './vision.ts';
import { installOpenAiErrorHandler } from './errors.ts';
import { availableModels, DEFAULT_SERVICE_MODEL, MODELS_CREATED, type ServiceModel } from './models.ts';
import { admitModelRequest } from './rate-limit.ts';
import { ChatCompletionBody, ChatCompletionResponse, ModelList, ModelObject, ModelParams, OpenAiErrorBody } from './schemas.ts';
import { streamCompletion } from './stream-completion.ts';

const errors = { 400: OpenAiErrorBody, 401: OpenAiErrorBody, 403: OpenAiErrorBody, 404: OpenAiErrorBody, 429: OpenAiErrorBody, 500: OpenAiErrorBody };

/** The OpenAI-compatible layer (spec 4.11), with its own error envelope in its own plugin scope. */
export async function openAiRoutes(app: App, deps: Deps) {
  await app.register(async (plugin) => {
    installOpenAiErrorHandler(plugin as unknown as FastifyInstance);
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    const served = () => availableModels(SERVED_MODES, { ads: deps.config.openai.adsModel });
    const findModel = (id: string): ServiceModel => {
      const model = served().find((candidate) => candidate.id === id);
      if (!model) throw new AppError(404, `The model '${id}' does not exist or is not available in this deployment`);
      return model;
    };
    const toModelObject = (model: ServiceModel) => ({ id: model.id, object: 'model' as const, created: MODELS_CREATED, owned_by: 'agentgate' });

    scope.get('/v1/models', {
      config: { scope: 'tasks:read' },
      schema: { tags: ['openai'], summary: 'Models: each selects a workflow', response: { 200: ModelList, ...errors } },
    }, async () => ({ object: 'list' as const, data: served().map(toModelObject) }));

    scope.get('/v1/models/:model', {
      config: { scope: 'tasks:read' },
      schema: { tags: ['openai'], summary: 'One model; its description is in X-Model-Description', params: ModelParams, response: { 200: ModelObject, ...errors } },
    }, async (request, reply) => {
      const model = findModel(request.params.model);
      reply.header('x-model-description', model.description);
      return toModelObject(model);
    });

    scope.post('/v1/chat/completions', {
      // A stream cannot be replayed from a stored answer; a retry with the same key gets the same task.
      config: { ownRateLimit: true, scope: 'tasks:write', replayAnswer: (request) => (request.body as { stream?: boolean } | undefined)?.stream !== true },
      preValidation: async (request) => refuseUnsupportedFields(request.body),
      schema: { tags: ['openai'], summary: 'Chat completion, streaming or not, answered by a task', body: ChatCompletionBody, response: { 200: ChatCompletionResponse, ...errors } },
    }, async (request, reply) => {
      const model = findModel(request.body.model ?? DEFAULT_SERVICE_MODEL);
      const chat = toChatTask(request.body, model);
      if (chat.hasImages) {
        requireVision(deps.models);
        await fetchRemoteImages(chat.turn!.messages, deps.config.network);
      }
      const header = request.headers['x-session-id'];
      const { chargeTokens, lease, found: session } = await admitModelRequest(deps, request, reply, {
        modelId: model.id, stream: request.body.stream === true,
        lookup: () => resolveChatSession(deps, request.caller, typeof header === 'string' ? header : undefined, chat, request.body.user),
      });
      const { context, serverContext } = chatTaskContext(chat, model);
      const submitted = await submitTask(deps, request.caller, {
        query: chat.query, session_id: session.sessionId, mode: model.mode === 'simple' || model.mode === 'standard' || model.mode === 'supervisor' ? model.mode : undefined, context,
      }, { taskId: idempotentResourceId(request), serverContext, traceContext: request.traceContext });
      // The task behind the answer, for what a chat completion cannot carry (a research task's citations and verification).
      reply.header('x-workflow-id', submitted.taskId);
      if (session.shouldAnnounce(submitted.session.id)) reply.headers({ 'x-session-id': submitted.session.publicId, 'x-service-session-id': submitted.session.id });
      const rememberAnswer = (answer: TaskAnswer) => session.rememberAnswer(submitted.session.id, answerTranscript(answer));
      if (lease) {
        return streamCompletion(deps, request, reply, {
          lease, taskId: submitted.taskId, model: model.id, includeUsage: request.body.stream_options?.include_usage === true,
          onUsage: (usage) => chargeTokens(usage.total_tokens), onAnswer: rememberAnswer,
        });
      }
      // The answer may take up to the completion timeout (spec 8: 35 minutes) with nothing to send meanwhile.
      request.raw.socket.setTimeout(0);
      const status = await waitForTaskStatus(deps, submitted.taskId, deps.config.openai.completionTimeoutSeconds * 1000, undefined, deps.handingOver);
      // A task that finished as the hand-over began still has its answer here.
      if (!isTerminal(status) && deps.handingOver.aborted) throw serviceUnavailable(`the server is restarting; the task continues: retry with the same Idempotency-Key, or read task ${submitted.taskId}`, 2);
      const { completion, answer } = await finishedCompletion(deps, submitted.taskId, model.id);
      await chargeTokens(completion.usage.total_tokens);
      await rememberAnswer(answer);
      return completion;
    });
  });
}
