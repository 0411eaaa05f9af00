import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { usageTotals } from '../llm/usage-totals.ts';
import { assistantTranscript, type TranscriptMessage } from './chat-messages.ts';
import type { OpenAiToolCall } from './client-tools.ts';

/** OpenAI's usage object; the prompt tokens include those read from the provider's prompt cache. */
export interface TaskUsage { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details: { cached_tokens: number } }

type UsageColumns = { prompt_tokens: number; completion_tokens: number; total_tokens: number; cached_tokens: number };

/** A completion's id, as OpenAI spells them: `chatcmpl-…` for a chat, `cmpl-…` for a text completion. */
export const completionId = (prefix: 'chatcmpl' | 'cmpl') => `${prefix}-${Date.now()}${randomBytes(6).toString('hex')}`;
export const unixSeconds = () => Math.floor(Date.now() / 1000);

/** A task's usage totals (llm/usage-totals.ts) under the names OpenAI gives them. */
const openAiUsage = (taskId: string) => sql`(select input_tokens as prompt_tokens, output_tokens as completion_tokens, total_tokens,
  cached_input_tokens as cached_tokens from (${usageTotals('task_id', taskId)}) totals)`;

const toTaskUsage = ({ prompt_tokens, completion_tokens, total_tokens, cached_tokens }: UsageColumns): TaskUsage =>
  ({ prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details: { cached_tokens } });

export async function taskUsage(deps: Deps, taskId: string): Promise<TaskUsage> {
  const { rows } = await sql<UsageColumns>`select * from ${openAiUsage(taskId)} usage`.execute(deps.db);
  return toTaskUsage(rows[0]);
}

export interface FinishedTask { status: string; result: string | null; error: string | null; metadata: unknown; usage: TaskUsage }

/** A finished task's outcome and its usage, in one read. */
export async function readFinishedTask(deps: Deps, taskId: string): Promise<FinishedTask> {
  const { rows } = await sql<Omit<FinishedTask, 'usage'> & UsageColumns>`
    select t.status, t.result, t.error, t.metadata, usage.* from tasks t, ${openAiUsage(taskId)} usage where t.id = ${taskId}`.execute(deps.db);
  if (rows.length === 0) throw new Error(`task ${taskId} not found`);
  const { prompt_tokens, completion_tokens, total_tokens, cached_tokens, ...task } = rows[0];
  return { ...task, usage: toTaskUsage({ prompt_tokens, completion_tokens, total_tokens, cached_tokens }) };
}

/** A finished task's answer: its text, or the client tools the model called (then the text is usually empty). */
export interface TaskAnswer {
  text: string;
  toolCalls: OpenAiToolCall[];
  /** Why the answering model stopped, as the task keeps it (`length`: cut at the output limit); absent when unknown. */
  stoppedFor: string | undefined;
}

/** Why an answer ended, as the model did not say it otherwise: cut short by the output limit or a content filter. */
export const cutShortReason = (answer: TaskAnswer) =>
  (answer.stoppedFor === 'length' || answer.stoppedFor === 'content_filter' ? answer.stoppedFor : undefined);

/** OpenAI's finish_reason: the client tools called, the output limit (`length`) or a content filter, else `stop`. */
export const finishReasonOf = (answer: TaskAnswer) => (answer.toolCalls.length > 0 ? 'tool_calls' : cutShortReason(answer) ?? 'stop');

/** The answer as the client will send it back in its next turn (chat-session.ts). */
export const answerTranscript = (answer: TaskAnswer): TranscriptMessage => assistantTranscript(answer.text, answer.toolCalls);

export function taskAnswerOf(task: { result: string | null; metadata: unknown }): TaskAnswer {
  const metadata = task.metadata as { tool_calls?: OpenAiToolCall[]; finish_reason?: string } | null;
  const toolCalls = metadata?.tool_calls;
  const stoppedFor = metadata?.finish_reason;
  return { text: task.result ?? '', toolCalls: Array.isArray(toolCalls) ? toolCalls : [], stoppedFor: typeof stoppedFor === 'string' ? stoppedFor : undefined };
}

/** A finished task's answer and usage; a task that did not complete is a server error, naming why. */
export async function readCompletedAnswer(deps: Deps, taskId: string): Promise<{ answer: TaskAnswer; usage: TaskUsage }> {
  const task = await readFinishedTask(deps, taskId);
  if (task.status !== 'COMPLETED') {
    const reason = task.status === 'QUEUED' || task.status === 'RUNNING' || task.status === 'PAUSED'
      ? `the task did not finish within the time limit (task ${taskId})`
      : `the task ended ${task.status.toLowerCase()}: ${task.error ?? 'no answer'} (task ${taskId})`;
    throw new AppError(500, reason);
  }
  return { answer: taskAnswerOf(task), usage: task.usage };
}

/** The answer as a chat completion (`chat.completion`). */
export function chatCompletionOf(answer: TaskAnswer, usage: TaskUsage, model: string) {
  const message = answer.toolCalls.length > 0
    ? { role: 'assistant' as const, content: answer.text === '' ? null : answer.text, refusal: null, tool_calls: answer.toolCalls }
    : { role: 'assistant' as const, content: answer.text, refusal: null };
  return {
    id: completionId('chatcmpl'),
    object: 'chat.completion' as const,
    created: unixSeconds(),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(answer) }],
    usage,
  };
}

/** The answer as a legacy text completion (`text_completion`), after the prompt when it is echoed. */
export function textCompletionOf(answer: TaskAnswer, usage: TaskUsage, model: string, echo: string) {
  return {
    id: completionId('cmpl'),
    object: 'text_completion' as const,
    created: unixSeconds(),
    model,
    choices: [{ index: 0, text: echo + answer.text, logprobs: null, finish_reason: finishReasonOf(answer) }],
    usage,
  };
}
