import { sql } from 'kysely';
import type { TaskStatus } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { changeTask } from '../task-state/change-task.ts';
import { startedContextPayload } from './started-context.ts';
import type { AgentAnswer, TaskSnapshot } from './task-snapshot.ts';

const UNFINISHED: readonly TaskStatus[] = ['QUEUED', 'RUNNING', 'PAUSED'];

/**
 * Marks the task RUNNING in the mode it will run in and announces it; returns the snapshot the rest of the
 * workflow uses (null when it already ended).
 */
export async function startTask(deps: Deps, taskId: string, chooseMode: (requestedMode: string | null) => string): Promise<TaskSnapshot | null> {
  const snapshot = await changeTask(deps, taskId, 'workflow', async (transaction, row) => {
    if (!UNFINISHED.includes(row.status)) return { result: null };
    // A task paused while queued stays PAUSED; its first checkpoint holds it.
    const task = await transaction.updateTable('tasks')
      .set({
        status: row.pause_requested ? 'PAUSED' : 'RUNNING',
        mode: row.mode ?? chooseMode(row.requested_mode),
        started_at: sql`coalesce(started_at, now())` as never, updated_at: sql`now()` as never,
      })
      .where('id', '=', taskId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const startedAtMs = task.started_at!.getTime();
    return {
      events: [{
        type: 'WORKFLOW_STARTED', agentId: 'orchestrator', message: 'Task started',
        payload: startedContextPayload(task.context), dedupeKey: 'workflow-started',
      }],
      result: {
        id: task.id,
        tenantId: task.tenant_id,
        userId: task.user_id,
        sessionId: task.session_id,
        query: task.query,
        requestedMode: task.requested_mode,
        context: task.context,
        options: task.options,
        createdAtMs: task.created_at.getTime(),
        startedAtMs,
        deadlineMs: startedAtMs + deps.config.taskTimeoutSeconds * 1000,
      },
    };
  });
  return snapshot ?? null;
}

export interface TaskOutcome {
  mode: string;
  answer: AgentAnswer;
  agentsUsed: number;
  complexityScore: number | null;
}

/** Stores the result and closes the event stream: final LLM_OUTPUT, WORKFLOW_COMPLETED, STREAM_END. */
export async function completeTask(deps: Deps, task: TaskSnapshot, outcome: TaskOutcome): Promise<void> {
  const { answer } = outcome;
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    await transaction.updateTable('tasks').set({
      status: 'COMPLETED',
      result: answer.text,
      error: null,
      mode: outcome.mode,
      model_used: answer.model,
      provider: answer.provider,
      agents_used: outcome.agentsUsed,
      complexity_score: outcome.complexityScore,
      completed_at: sql`now()` as never,
      updated_at: sql`now()` as never,
    }).where('id', '=', task.id).execute();
    return {
      events: [
        {
          type: 'LLM_OUTPUT', agentId: 'final_output', message: answer.text, dedupeKey: 'final-output',
          payload: {
            model_used: answer.model, provider: answer.provider,
            usage: { input_tokens: answer.inputTokens, output_tokens: answer.outputTokens, total_tokens: answer.inputTokens + answer.outputTokens, cost_usd: answer.costUsd },
          },
        },
        { type: 'WORKFLOW_COMPLETED', agentId: 'orchestrator', message: 'Task completed', dedupeKey: 'workflow-completed' },
        { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
      ],
    };
  });
}

/** Records a failure (FAILED, or TIMEOUT for the wall-clock limit) and closes the event stream. */
export async function failTask(deps: Deps, task: TaskSnapshot, status: 'FAILED' | 'TIMEOUT', error: string): Promise<void> {
  await changeTask(deps, task.id, 'workflow', async (transaction, row) => {
    if (!UNFINISHED.includes(row.status)) return undefined;
    await transaction.updateTable('tasks').set({ status, error, completed_at: sql`now()` as never, updated_at: sql`now()` as never })
      .where('id', '=', task.id).execute();
    return {
      events: [
        { type: 'ERROR_OCCURRED', agentId: 'orchestrator', message: error, payload: { status }, dedupeKey: 'task-error' },
        { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
      ],
    };
  });
}

/** Records the cancellation the workflow honoured at `checkpoint` and closes the event stream. */
export async function finishCancelled(deps: Deps, task: TaskSnapshot, checkpoint: string): Promise<void> {
  await changeTask(deps, task.id, 'workflow', async (transaction, row) => {
    if (!UNFINISHED.includes(row.status)) return undefined;
    await transaction.updateTable('tasks').set({ status: 'CANCELLED', error: 'cancelled', completed_at: sql`now()` as never, updated_at: sql`now()` as never })
      .where('id', '=', task.id).execute();
    return {
      events: [
        { type: 'WORKFLOW_CANCELLED', agentId: 'orchestrator', message: 'Task cancelled', payload: { checkpoint, was_paused: row.pause_requested }, dedupeKey: 'workflow-cancelled' },
        { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
      ],
    };
  });
}
