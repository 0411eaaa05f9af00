import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { serviceUnavailable } from '../errors.ts';
import { idempotentResourceId } from '../http/idempotency.ts';
import { submitTask } from '../tasks/submit-task.ts';
import { waitForTaskStatus } from '../tasks/wait-for-task.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { resolveChatSession } from './chat-session.ts';
import { chatTaskContext, type ChatTask } from './chat-task.ts';
import { answerTranscript, readCompletedAnswer, type TaskAnswer, type TaskUsage } from './completion.ts';
import type { ServiceModel } from './models.ts';
import { admitModelRequest } from './rate-limit.ts';
import { taskModeOf } from './served-model.ts';
import { streamCompletion, type ChunkFormat } from './stream-completion.ts';

export interface AnswerRequest<T> {
  model: ServiceModel;
  chat: ChatTask;
  stream: boolean;
  includeUsage: boolean;
  /** The end user the client names (`user`): conversations of different users never share a session. */
  user: string | undefined;
  /** How a streamed answer's chunks are written (chat or text completion chunks). */
  chunks: ChunkFormat;
  /** The body of an answer not streamed. */
  completionOf: (answer: TaskAnswer, usage: TaskUsage) => T;
}

/**
 * A chat or text completion answered by a task (spec 4.11): admitted under the key's limits, submitted in the
 * conversation's session (chat-session.ts), then streamed as it is made or returned once it has ended. The task's id
 * is in X-Workflow-ID, for what a completion cannot carry.
 */
export async function answerWithTask<T>(deps: Deps, request: FastifyRequest, reply: FastifyReply, asked: AnswerRequest<T>): Promise<T | undefined> {
  const { model, chat } = asked;
  const header = request.headers['x-session-id'];
  const { chargeTokens, lease, found: session } = await admitModelRequest(deps, request, reply, {
    modelId: model.id, stream: asked.stream,
    lookup: () => resolveChatSession(deps, request.caller, typeof header === 'string' ? header : undefined, chat, asked.user),
  });
  const { context, serverContext } = chatTaskContext(chat, model);
  const submitted = await submitTask(deps, request.caller, {
    query: chat.query, session_id: session.sessionId, mode: taskModeOf(model), context,
  }, { taskId: idempotentResourceId(request), serverContext, traceContext: request.traceContext });
  reply.header('x-workflow-id', submitted.taskId);
  if (session.shouldAnnounce(submitted.session.id)) reply.headers({ 'x-session-id': submitted.session.publicId, 'x-service-session-id': submitted.session.id });
  const rememberAnswer = (answer: TaskAnswer) => session.rememberAnswer(submitted.session.id, answerTranscript(answer));
  if (lease) {
    return streamCompletion(deps, request, reply, {
      lease, taskId: submitted.taskId, includeUsage: asked.includeUsage, chunks: asked.chunks,
      onUsage: (usage) => chargeTokens(usage.total_tokens), onAnswer: rememberAnswer,
    }).then(() => undefined);
  }
  // The answer may take up to the completion timeout (spec 8: 35 minutes) with nothing to send meanwhile.
  request.raw.socket.setTimeout(0);
  const status = await waitForTaskStatus(deps, submitted.taskId, deps.config.openai.completionTimeoutSeconds * 1000, undefined, deps.handingOver);
  // A task that finished as the hand-over began still has its answer here.
  if (!isTerminal(status) && deps.handingOver.aborted) throw serviceUnavailable(`the server is restarting; the task continues: retry with the same Idempotency-Key, or read task ${submitted.taskId}`, 2);
  const { answer, usage } = await readCompletedAnswer(deps, submitted.taskId);
  await chargeTokens(usage.total_tokens);
  await rememberAnswer(answer);
  return asked.completionOf(answer, usage);
}
