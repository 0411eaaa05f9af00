import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { usageTotals } from '../llm/usage-totals.ts';
import { assistantTranscript, type TranscriptMessage } from './chat-messages.ts';
import type { OpenAiToolCall } from './client-tools.ts';

export interface TaskUsage { prompt_tokens: number; completion_tokens: number; total_tokens: number }

export const completionId = () => `chatcmpl-${Date.now()}${randomBytes(6).toString('hex')}`;
export const unixSeconds = () => Math.floor(Date.now() / 1000);

/** A task's usage totals (llm/usage-totals.ts) under the names OpenAI gives them. */
const openAiUsage = (taskId: string) => sql`(select input_tokens as prompt_tokens, output_tokens as completion_tokens, total_tokens
  from (${usageTotals('task_id', taskId)}) totals)`;

export async function taskUsage(deps: Deps, taskId: string): Promise<TaskUsage> {
  const { rows } = await sql<TaskUsage>`select * from ${openAiUsage(taskId)} usage`.execute(deps.db);
  return rows[0];
}

export interface FinishedTask { status: string; result: string | null; error: string | null; metadata: unknown; usage: TaskUsage }

/** A finished task's outcome and its usage, in one read. */
export async function readFinishedTask(deps: Deps, taskId: string): Promise<FinishedTask> {
  const { rows } = await sql<Omit<FinishedTask, 'usage'> & TaskUsage>`
    select t.status, t.result, t.error, t.metadata, usage.* from tasks t, ${openAiUsage(taskId)} usage where t.id = ${taskId}`.execute(deps.db);
  if (rows.length === 0) throw new Error(`task ${taskId} not found`);
  const { prompt_tokens, completion_tokens, total_tokens, ...task } = rows[0];
  return { ...task, usage: { prompt_tokens, completion_tokens, total_tokens } };
}

/** A finished task's answer: its text, or the client tools the model called (then the text is usually empty). */
export interface TaskAnswer {
  text: string;
  toolCalls: OpenAiToolCall[];
}

export const finishReasonOf = (answer: TaskAnswer) => (answer.toolCalls.length > 0 ? 'tool_calls' : 'stop');

/** The answer as the client will send it back in its next turn (chat-session.ts). */
export const answerTranscript = (answer: TaskAnswer): TranscriptMessage => assistantTranscript(answer.text, answer.toolCalls);

export function taskAnswerOf(task: { result: string | null; metadata: unknown }): TaskAnswer {
  const toolCalls = (task.metadata as { tool_calls?: OpenAiToolCall[] } | null)?.tool_calls;
  return { text: task.result ?? '', toolCalls: Array.isArray(toolCalls) ? toolCalls : [] };
}

/** The finished task as the answer of a non-streaming completion; a failed task is a server error. */
export async function finishedCompletion(deps: Deps, taskId: string, model: string) {
  const task = await readFinishedTask(deps, taskId);
  if (task.status !== 'COMPLETED') {
    const reason = task.status === 'QUEUED' || task.status === 'RUNNING' || task.status === 'PAUSED'
      ? `the task did not finish within the time limit (task ${taskId})`
      : `the task ended ${task.status.toLowerCase()}: ${task.error ?? 'no answer'} (task ${taskId})`;
    throw new AppError(500, reason);
  }
  const answer = taskAnswerOf(task);
  const message = answer.toolCalls.length > 0
    ? { role: 'assistant' as const, content: answer.text === '' ? null : answer.text, refusal: null, tool_calls: answer.toolCalls }
    : { role: 'assistant' as const, content: answer.text, refusal: null };
  return {
    completion: {
      id: completionId(),
      object: 'chat.completion' as const,
      created: unixSeconds(),
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(answer) }],
      usage: task.usage,
    },
    answer,
  };
}
