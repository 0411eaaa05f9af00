import type { TaskStatus } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { isTerminal } from '../../task-state/statuses.ts';
import { cutShortReason, taskAnswerOf, taskUsage, type TaskUsage } from '../completion.ts';
import { answerItems, type ResponseAnswer } from './input-items.ts';
import { readResponseTask, type ResponseRecord, type ResponseTaskState } from './queries.ts';
import { outputMessageIdOf, responseIdOf } from './response-ids.ts';
import type { ResponseView } from './schemas.ts';

const STATUSES: Record<TaskStatus, ResponseView['status']> = {
  QUEUED: 'queued', RUNNING: 'in_progress', PAUSED: 'in_progress',
  COMPLETED: 'completed', FAILED: 'failed', TIMEOUT: 'failed', CANCELLED: 'cancelled',
};

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The response as its task stands now: status, answer and usage come from the task. */
export async function readResponseView(deps: Deps, record: ResponseRecord): Promise<ResponseView> {
  const task = await readResponseTask(deps, record.taskId);
  const usage = isTerminal(task.status) ? await taskUsage(deps, record.taskId) : undefined;
  return buildResponseView(record, task, usage);
}

/** Why an answer cut short is incomplete, in the Responses API's words. */
const INCOMPLETE_REASONS = { length: 'max_output_tokens', content_filter: 'content_filter' } as const;

export function buildResponseView(record: ResponseRecord, task: Pick<ResponseTaskState, 'status' | 'result' | 'metadata' | 'error' | 'completedAt'>, usage: TaskUsage | undefined): ResponseView {
  const answer = task.status === 'COMPLETED' ? taskAnswerOf(task) : undefined;
  // A completed task whose answer the output limit (or a filter) cut short is an incomplete response, as OpenAI's is.
  const cutShort = answer && answer.toolCalls.length === 0 ? cutShortReason(answer) : undefined;
  const status = cutShort ? 'incomplete' : STATUSES[task.status];
  return {
    ...requestEcho(record),
    status,
    incomplete_details: cutShort ? { reason: INCOMPLETE_REASONS[cutShort] } : null,
    completed_at: status === 'completed' && task.completedAt ? seconds(task.completedAt) : null,
    error: status === 'failed' ? { code: 'server_error', message: failureMessage(task) } : null,
    output: answer ? outputItems(record.taskId, answer, cutShort ? 'incomplete' : 'completed') : [],
    usage: usage ? toResponseUsage(usage) : null,
  };
}

/** The response before any work is known (the snapshot `response.created` carries). */
export function openingView(record: ResponseRecord): ResponseView {
  return { ...requestEcho(record), status: record.background ? 'queued' : 'in_progress', incomplete_details: null, completed_at: null, error: null, output: [], usage: null };
}

function requestEcho(record: ResponseRecord) {
  const { parameters } = record;
  return {
    id: responseIdOf(record.taskId),
    object: 'response' as const,
    created_at: seconds(record.createdAt),
    background: record.background,
    instructions: record.instructions,
    max_output_tokens: parameters.max_output_tokens,
    model: record.model,
    parallel_tool_calls: parameters.parallel_tool_calls,
    previous_response_id: record.previousTaskId ? responseIdOf(record.previousTaskId) : null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: record.stored,
    temperature: parameters.temperature ?? null,
    text: { format: parameters.text_format ?? { type: 'text' } },
    tool_choice: parameters.tool_choice ?? 'auto',
    tools: parameters.tools ?? [],
    top_p: parameters.top_p ?? null,
    truncation: 'disabled' as const,
    user: parameters.user,
    safety_identifier: parameters.safety_identifier,
    metadata: parameters.metadata,
  };
}

function failureMessage(task: Pick<ResponseTaskState, 'status' | 'error'>): string {
  if (task.status === 'TIMEOUT') return `the task timed out${task.error ? `: ${task.error}` : ''}`;
  return task.error ?? 'the task failed';
}

export function outputMessage(taskId: string, text: string, status: 'in_progress' | 'completed' | 'incomplete') {
  return {
    id: outputMessageIdOf(taskId), type: 'message', status, role: 'assistant',
    content: status === 'in_progress' ? [] : [outputText(text)],
  };
}

/** The answer as output items: its message (unless it only calls functions), then each function call. */
export function outputItems(taskId: string, answer: ResponseAnswer, messageStatus: 'completed' | 'incomplete' = 'completed') {
  const calls = answerItems(taskId, answer).filter((item) => item.type === 'function_call');
  return calls.length > 0 && answer.text === '' ? calls : [outputMessage(taskId, answer.text, messageStatus), ...calls];
}

export const outputText = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

function toResponseUsage(usage: TaskUsage) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: usage.prompt_tokens_details,
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}
