import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { usageTotals } from '../llm/usage-totals.ts';

export interface TaskUsage { prompt_tokens: number; completion_tokens: number; total_tokens: number }

export const completionId = () => `chatcmpl-${Date.now()}${randomBytes(6).toString('hex')}`;
export const unixSeconds = () => Math.floor(Date.now() / 1000);

export async function taskUsage(deps: Deps, taskId: string): Promise<TaskUsage> {
  const { rows } = await sql<TaskUsage>`
    select input_tokens as prompt_tokens, output_tokens as completion_tokens, total_tokens
    from (${usageTotals('task_id', taskId)}) usage`.execute(deps.db);
  return rows[0];
}

/** The finished task as the answer of a non-streaming completion; a failed task is a server error. */
export async function finishedCompletion(deps: Deps, taskId: string, model: string) {
  const task = await deps.db.selectFrom('tasks').select(['status', 'result', 'error']).where('id', '=', taskId).executeTakeFirstOrThrow();
  if (task.status !== 'COMPLETED') {
    const reason = task.status === 'QUEUED' || task.status === 'RUNNING' || task.status === 'PAUSED'
      ? `the task did not finish within the time limit (task ${taskId})`
      : `the task ended ${task.status.toLowerCase()}: ${task.error ?? 'no answer'} (task ${taskId})`;
    throw new AppError(500, reason);
  }
  return {
    id: completionId(),
    object: 'chat.completion' as const,
    created: unixSeconds(),
    model,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: task.result ?? '' }, finish_reason: 'stop' }],
    usage: await taskUsage(deps, taskId),
  };
}
