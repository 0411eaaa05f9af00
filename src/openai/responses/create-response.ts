import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { badRequest, isAppError, serviceUnavailable } from '../../errors.ts';
import { idempotentResourceId } from '../../http/idempotency.ts';
import { isTerminal } from '../../task-state/statuses.ts';
import { submitTask } from '../../tasks/submit-task.ts';
import { waitForTaskStatus } from '../../tasks/wait-for-task.ts';
import { modelCallSettings } from '../call-settings.ts';
import { chatTaskContext, MAX_TOKENS_CAP } from '../chat-task.ts';
import { DEFAULT_SERVICE_MODEL } from '../models.ts';
import { admitModelRequest } from '../rate-limit.ts';
import { prepareImages } from '../remote-images.ts';
import { normalizeInput, toConversation } from './input-items.ts';
import { findOwnedResponse, insertResponse, readEarlierTurns, readResponseTask, type ResponseRecord } from './queries.ts';
import { refuseUnsupportedFields } from './refused-fields.ts';
import { responseIdOf } from './response-ids.ts';
import { readResponseView } from './response-view.ts';
import type { ResponseCreateRequest, ResponseView } from './schemas.ts';
import { responseTurnOf } from './response-turn.ts';
import { findServedModel, taskModeOf } from '../served-model.ts';
import { streamResponse } from './stream-response.ts';


/**
 * POST /v1/responses: the request becomes a task (a durable workflow) in the session of the response it
 * continues, with the chain's conversation. Answers at once (background), as a stream of typed events, or
 * once the task has ended.
 */
export async function createResponse(deps: Deps, request: FastifyRequest, reply: FastifyReply): Promise<ResponseView | undefined> {
  const { caller } = request;
  const body = request.body as ResponseCreateRequest;
  refuseUnsupportedFields(body);
  const model = findServedModel(deps, body.model ?? DEFAULT_SERVICE_MODEL);
  const taskId = idempotentResourceId(request) ?? randomUUID();
  const input = normalizeInput(body.input, taskId);
  const { chargeTokens, lease, found: previous } = await admitModelRequest(deps, request, reply, {
    modelId: model.id, stream: body.stream === true, lookup: () => findPreviousTurns(deps, caller, body.previous_response_id),
  });
  const conversation = toConversation(previous?.turns ?? [], input, body.instructions);
  const callSettings = modelCallSettings(body);
  const turn = responseTurnOf(body, conversation, model);
  if (conversation.hasImages) await prepareImages(deps, turn!.messages);
  const { context, serverContext } = chatTaskContext({
    query: conversation.query, systemPrompt: conversation.systemPrompt, history: conversation.history, transcript: [],
    maxTokens: Math.min(body.max_output_tokens ?? model.defaultMaxTokens, MAX_TOKENS_CAP),
    callSettings, turn, hasImages: conversation.hasImages,
  }, model);
  const submitted = await submitTask(deps, caller, {
    query: conversation.query, session_id: previous?.sessionId, mode: taskModeOf(model), context,
  }, { taskId, serverContext, traceContext: request.traceContext });
  const record: ResponseRecord = {
    taskId, previousTaskId: previous?.record.taskId ?? null, model: model.id, instructions: body.instructions ?? null, input,
    parameters: {
      max_output_tokens: body.max_output_tokens ?? null, temperature: callSettings.temperature ?? null, top_p: callSettings.topP ?? null,
      tools: body.tools ?? [], tool_choice: body.tool_choice ?? 'auto', text_format: body.text?.format ?? { type: 'text' },
      metadata: body.metadata ?? {}, user: body.user ?? null,
      safety_identifier: body.safety_identifier ?? null, parallel_tool_calls: body.parallel_tool_calls ?? true,
    },
    background: body.background === true, stored: body.store !== false, createdAt: submitted.createdAt,
  };
  await insertResponse(deps, { ...record, tenantId: caller.tenantId, userId: caller.userId });
  // The task and session behind the response, for what the Responses API cannot carry (events, citations).
  reply.headers({ 'x-workflow-id': taskId, 'x-session-id': submitted.session.publicId, 'x-service-session-id': submitted.session.id });
  const charge = async (view: ResponseView) => chargeTokens(view.usage?.total_tokens ?? 0);
  if (lease) return streamResponse(deps, request, reply, { lease, record, startingAfter: -1, onFinished: charge }).then(() => undefined);
  if (record.background) return readResponseView(deps, record);
  // The answer may take up to the completion timeout (spec 8) with nothing to send meanwhile.
  request.raw.socket.setTimeout(0);
  const status = await waitForTaskStatus(deps, taskId, deps.config.openai.completionTimeoutSeconds * 1000, undefined, deps.handingOver);
  // A task that finished as the hand-over began still has its answer here.
  if (!isTerminal(status) && deps.handingOver.aborted) throw serviceUnavailable(`the server is restarting; the response continues: read it with GET /v1/responses/${responseIdOf(taskId)}`, 2);
  const view = await readResponseView(deps, record);
  await charge(view);
  return view;
}

/** The response a request continues (see findPreviousResponse) and the turns of its conversation; undefined for none. */
async function findPreviousTurns(deps: Deps, caller: Caller, responseId: string | null | undefined) {
  if (!responseId) return undefined;
  const previous = await findPreviousResponse(deps, caller, responseId);
  return { ...previous, turns: await readEarlierTurns(deps, previous.record.taskId) };
}

/** The response a request continues: the caller's, stored, and finished (its answer is part of the conversation). */
async function findPreviousResponse(deps: Deps, caller: Caller, responseId: string) {
  const record = await findOwnedResponse(deps, caller, responseId).catch((error: unknown) => {
    if (isAppError(error) && error.statusCode === 404) throw badRequest(`previous_response_id: previous response with id '${responseId}' not found.`);
    throw error;
  });
  const task = await readResponseTask(deps, record.taskId);
  if (!isTerminal(task.status)) throw badRequest(`previous_response_id: response '${responseId}' has not finished yet; continue it once it has`);
  return { record, sessionId: task.sessionId };
}
