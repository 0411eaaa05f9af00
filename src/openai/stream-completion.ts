import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import type { TaskEvent } from '../events/append-event.ts';
import { followTaskEvents } from '../events/follow-events.ts';
import { openSse, type SseStream } from '../events/sse.ts';
import type { StreamLease } from '../streaming/stream-slots.ts';
import type { OpenAiToolCall } from './client-tools.ts';
import { completionId, finishReasonOf, readFinishedTask, taskAnswerOf, unixSeconds, type TaskAnswer, type TaskUsage } from './completion.ts';

const KEEPALIVE_MS = 30_000;

/** Event types forwarded in `service_events` (spec 6.2: workflow, agent, tool, progress, team, budget/approval). */
const SERVICE_EVENT_TYPES = new Set([
  'WORKFLOW_STARTED', 'WORKFLOW_PAUSING', 'WORKFLOW_PAUSED', 'WORKFLOW_RESUMED', 'WORKFLOW_CANCELLING', 'WORKFLOW_CANCELLED', 'WORKFLOW_COMPLETED',
  'AGENT_STARTED', 'AGENT_COMPLETED', 'AGENT_THINKING', 'TOOL_INVOKED', 'TOOL_OBSERVATION',
  'PROGRESS', 'DATA_PROCESSING', 'WAITING', 'ERROR_RECOVERY', 'ERROR_OCCURRED',
  'TEAM_RECRUITED', 'TEAM_RETIRED', 'TEAM_STATUS', 'ROLE_ASSIGNED', 'DELEGATION', 'DEPENDENCY_SATISFIED',
  'BUDGET_THRESHOLD', 'APPROVAL_REQUESTED', 'APPROVAL_DECISION',
]);

interface StreamOptions {
  lease: StreamLease; taskId: string; includeUsage: boolean;
  /** How the chunks are written: chat completion chunks (chatChunks) or a text completion's (textChunks). */
  chunks: ChunkFormat;
  onUsage: (usage: TaskUsage) => Promise<void>;
  /** Called with the answer once its text (or tool calls) has been sent, before the chunk that ends it. */
  onAnswer?: (answer: TaskAnswer) => Promise<void>;
}

/**
 * Streams a task as `chat.completion.chunk`s: first the role (spec 4.11; with empty content, as OpenAI sends it),
 * then the final answer's real token deltas as the model produces them, service events after the role on
 * empty-delta chunks, the client tools the model called as `delta.tool_calls`, a last chunk with the finish reason
 * (and usage when asked), then `[DONE]`. A text completion streams the same way in its own chunks (the echoed prompt
 * first, no service events). The chunks are read from the task's event log like any stream, except the
 * answer's first delta when the task runs in this process: it is shown as its write is queued (EventHub.preview).
 */
export async function streamCompletion(deps: Deps, request: FastifyRequest, reply: FastifyReply, options: StreamOptions): Promise<void> {
  const sse = openSse(request, reply, {
    pingIntervalMs: KEEPALIVE_MS, pingComment: 'keepalive', bufferLimitBytes: deps.config.streams.bufferLimitBytes, stopping: deps.handingOver,
  });
  const chunk = options.chunks;
  let streamedAnswer = false;
  const sendContent = async (text: string) => { if (text !== '') await sse.send({ data: chunk.content(text) }); };
  const sendChunk = async (data: string | undefined) => { if (data !== undefined) await sse.send({ data }); };
  /** The answer's first delta, shown as it was queued for its commit (EventHub.preview): its stored event is not sent again. */
  let previewed: string | undefined;
  const stopPreviews = deps.events.subscribePreviews(options.taskId, (text) => {
    if (streamedAnswer || sse.signal.aborted) return;
    streamedAnswer = true;
    previewed = text;
    sendContent(text).catch((error: unknown) => deps.logger.warn({ err: error, task_id: options.taskId }, 'first words not sent'));
  });
  try {
    await sendChunk(chunk.opening());
    const signal = AbortSignal.any([sse.signal, options.lease.revoked]);
    for await (const event of followTaskEvents(deps.db, deps.events, options.taskId, { afterSeq: 0, signal, logger: deps.logger })) {
      if (isAnswerDelta(event) && previewed !== undefined) {
        const shown = previewed;
        previewed = undefined;
        if (event.message === shown) continue;
        // What was shown was never stored (its write failed, and the answer was made again): the text cannot be mended.
        await sse.send({ data: errorChunk(`the answer was made again after its first words were sent; read task ${options.taskId} for the whole answer`, 'server_error', 'answer_restarted') });
        return;
      }
      if (isAnswerDelta(event)) {
        streamedAnswer = true;
        await sendContent(event.message ?? '');
      } else if (event.type === 'LLM_OUTPUT' && event.agent_id === 'final_output' && !streamedAnswer) {
        await sendContent(event.message ?? '');
      } else if (SERVICE_EVENT_TYPES.has(event.type)) {
        await sendChunk(chunk.serviceEvent(toServiceEvent(event)));
      }
    }
    if (sse.signal.aborted) return;
    if (options.lease.revoked.aborted) {
      await sse.send({ data: errorChunk(String(options.lease.revoked.reason), 'authentication_error', 'credential_revoked') });
      return;
    }
    await finish(deps, sse, chunk, options);
  } finally {
    stopPreviews();
    options.lease.release();
    sse.end();
  }
}

async function finish(deps: Deps, sse: SseStream, chunk: ChunkFormat, options: StreamOptions): Promise<void> {
  const { usage, ...task } = await readFinishedTask(deps, options.taskId);
  await options.onUsage(usage);
  if (task.status !== 'COMPLETED') {
    await sse.send({ data: errorChunk(`the task ended ${task.status.toLowerCase()}: ${task.error ?? ''}`, 'server_error', 'internal_error') });
  } else {
    const answer = taskAnswerOf(task);
    for (const [index, call] of answer.toolCalls.entries()) {
      for (const delta of toolCallDeltas(call, index)) await sse.send({ data: chunk.toolCall(delta) });
    }
    // Before the client can know the answer is whole, so its next turn always finds it.
    await options.onAnswer?.(answer);
    await sse.send({ data: chunk.finish(finishReasonOf(answer), options.includeUsage ? usage : undefined) });
  }
  await sse.send({ data: '[DONE]' });
}

/** An error in the stream, as OpenAI sends one mid-stream: an `error` object in place of a chunk. */
const errorChunk = (message: string, type: string, code: string) => JSON.stringify({ error: { message, type, code } });

type ServiceEvent = ReturnType<typeof toServiceEvent>;

/** How one completion's chunks are written. */
export interface ChunkFormat {
  /** What opens the stream before any answer (chat: the role), if anything. */
  opening(): string | undefined;
  content(text: string): string;
  /** A service event on a chunk of its own; undefined where the format has no place for one. */
  serviceEvent(event: ServiceEvent): string | undefined;
  toolCall(delta: Record<string, unknown>): string;
  finish(reason: string, usage: TaskUsage | undefined): string;
}

/** `chat.completion.chunk`s; the first chunk with content carries the role too. */
export function chatChunks(model: string): ChunkFormat {
  const id = completionId('chatcmpl');
  const created = unixSeconds();
  let sentRole = false;
  const other = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) => JSON.stringify({
    id, object: 'chat.completion.chunk', created, model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  });
  const content = (text: string) => {
    const delta = sentRole ? { content: text } : { role: 'assistant', content: text };
    sentRole = true;
    return other(delta);
  };
  return {
    opening: () => content(''),
    content,
    serviceEvent: (event) => other({}, null, { service_events: [event] }),
    toolCall: (delta) => other({ tool_calls: [delta] }),
    finish: (reason, usage) => other({}, reason, usage ? { usage } : {}),
  };
}

/** A legacy text completion's chunks (`text_completion`, the text in `choices[0].text`): the echoed prompt first. */
export function textChunks(model: string, echo: string): ChunkFormat {
  const id = completionId('cmpl');
  const created = unixSeconds();
  const chunk = (text: string, finishReason: string | null, extra: Record<string, unknown> = {}) => JSON.stringify({
    id, object: 'text_completion', created, model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }],
    ...extra,
  });
  return {
    opening: () => (echo === '' ? undefined : chunk(echo, null)),
    content: (text) => chunk(text, null),
    serviceEvent: () => undefined,
    toolCall: () => { throw new Error('a text completion offers no tools'); },
    finish: (reason, usage) => chunk('', reason, usage ? { usage } : {}),
  };
}

const ARGUMENT_PIECE_CHARS = 16;

/**
 * One call as OpenAI streams it: its index, id, type and name first with empty arguments, then the arguments in
 * pieces, each delta carrying only the index and the piece.
 */
function toolCallDeltas(call: OpenAiToolCall, index: number): Record<string, unknown>[] {
  const pieces = call.function.arguments.match(new RegExp(`[\\s\\S]{1,${ARGUMENT_PIECE_CHARS}}`, 'g')) ?? [];
  return [
    { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
    ...pieces.map((piece) => ({ index, function: { arguments: piece } })),
  ];
}

/** Token deltas of the agent whose output is the task's answer (workflows mark them `final_answer`). */
const isAnswerDelta = (event: TaskEvent) => event.type === 'LLM_PARTIAL' && event.payload?.final_answer === true;

function toServiceEvent(event: TaskEvent) {
  return {
    type: event.type,
    agent_id: event.agent_id,
    message: event.message,
    timestamp: Math.floor(Date.parse(event.timestamp) / 1000),
    payload: event.payload ?? {},
  };
}
