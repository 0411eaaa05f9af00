import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import { appendTaskEvents } from '../events/append-event.ts';
import type { AgentAnswer, TaskSnapshot } from './task-snapshot.ts';

/** Marks the task RUNNING and announces it; returns the snapshot the rest of the workflow uses. */
export async function startTask(deps: Deps, taskId: string): Promise<TaskSnapshot | null> {
  const snapshot = await deps.db.transaction().execute(async (transaction) => {
    // A task paused while queued stays PAUSED; its first checkpoint holds it.
    const task = await transaction.updateTable('tasks')
      .set({
        status: sql`case when pause_requested then 'PAUSED' else 'RUNNING' end` as never,
        started_at: sql`coalesce(started_at, now())` as never, updated_at: sql`now()` as never,
      })
      .where('id', '=', taskId)
      .where('status', 'in', ['QUEUED', 'RUNNING', 'PAUSED'])
      .returningAll()
      .executeTakeFirst();
    if (!task) return null;
    await appendTaskEvents(transaction, taskId, [{
      type: 'WORKFLOW_STARTED', agentId: 'orchestrator', message: 'Task started',
      payload: { task_context: task.context }, dedupeKey: 'workflow-started',
    }]);
    const startedAtMs = task.started_at!.getTime();
    return {
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
    };
  });
  deps.events.wake(taskId);
  return snapshot;
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
  await deps.db.transaction().execute(async (transaction) => {
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
    await appendTaskEvents(transaction, task.id, [
      {
        type: 'LLM_OUTPUT', agentId: 'final_output', message: answer.text, dedupeKey: 'final-output',
        payload: {
          model_used: answer.model, provider: answer.provider,
          usage: { input_tokens: answer.inputTokens, output_tokens: answer.outputTokens, total_tokens: answer.inputTokens + answer.outputTokens, cost_usd: answer.costUsd },
        },
      },
      { type: 'WORKFLOW_COMPLETED', agentId: 'orchestrator', message: 'Task completed', dedupeKey: 'workflow-completed' },
      { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
    ]);
  });
  deps.events.wake(task.id);
}

const UNFINISHED = ['QUEUED', 'RUNNING', 'PAUSED'] as const;

/** Records a failure (FAILED, or TIMEOUT for the wall-clock limit) and closes the event stream. */
export async function failTask(deps: Deps, task: TaskSnapshot, status: 'FAILED' | 'TIMEOUT', error: string): Promise<void> {
  await deps.db.transaction().execute(async (transaction) => {
    const updated = await transaction.updateTable('tasks').set({
      status, error, completed_at: sql`now()` as never, updated_at: sql`now()` as never,
    }).where('id', '=', task.id).where('status', 'in', UNFINISHED).returning('id').executeTakeFirst();
    if (!updated) return;
    await appendTaskEvents(transaction, task.id, [
      { type: 'ERROR_OCCURRED', agentId: 'orchestrator', message: error, payload: { status }, dedupeKey: 'task-error' },
      { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
    ]);
  });
  deps.events.wake(task.id);
}

/** Records the cancellation the workflow honoured at `checkpoint` and closes the event stream. */
export async function finishCancelled(deps: Deps, task: TaskSnapshot, checkpoint: string): Promise<void> {
  await deps.db.transaction().execute(async (transaction) => {
    const cancelled = await transaction.updateTable('tasks').set({
      status: 'CANCELLED', error: 'cancelled', completed_at: sql`now()` as never, updated_at: sql`now()` as never,
    }).where('id', '=', task.id).where('status', 'in', UNFINISHED).returning(['pause_requested']).executeTakeFirst();
    if (!cancelled) return;
    await appendTaskEvents(transaction, task.id, [
      { type: 'WORKFLOW_CANCELLED', agentId: 'orchestrator', message: 'Task cancelled', payload: { checkpoint, was_paused: cancelled.pause_requested }, dedupeKey: 'workflow-cancelled' },
      { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
    ]);
  });
  deps.events.wake(task.id);
}
