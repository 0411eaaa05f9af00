import type { Db } from '../../db/database.ts';
import { storableText } from '../../db/storable-text.ts';
import type { TaskRow } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import type { AlongsideWrite, NewTaskEvent } from '../../events/append-event.ts';
import { sessionTitleRequest } from '../memory/session-titles.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { markCompleted, markEnded, markStarted, markStartedLater, type PartialResult } from '../../task-state/lifecycle.ts';
import { UNFINISHED_STATUSES } from '../../task-state/statuses.ts';
import { markSchedulePaused } from '../../task-state/schedule-pause.ts';
import { startedContextPayload } from './started-context.ts';
import type { CostPrices } from '../agent-calls/token-budget.ts';
import { parseTaskSettings, type TaskSettings } from './task-settings.ts';
import type { AgentAnswer, TaskSnapshot } from './task-snapshot.ts';
import type { Routing } from '../planning/query-route.ts';

/** The mode a task starts in and, when a task without a mode was routed, how (workflows/router.ts). */
export type ChooseRoute = (row: TaskRow) => { mode: string; routing?: Routing };


/**
 * Marks the task RUNNING in the mode it will run in and announces it; returns the snapshot the rest of the
 * workflow uses (null when it already ended).
 */
export async function startTask(deps: Deps, taskId: string, chooseRoute: ChooseRoute): Promise<TaskSnapshot | null> {
  const snapshot = await changeTask(deps, taskId, 'workflow', async (transaction, row) => {
    if (!UNFINISHED_STATUSES.includes(row.status)) return { result: null };
    return startWithin(deps, transaction, row, chooseRoute);
  });
  return snapshot ?? null;
}

/**
 * The start inside the caller's transaction on the locked row. A task paused while queued stays PAUSED;
 * its first checkpoint holds it. With `writeLater` the update goes with the events (changeTask's `alongside`), and
 * the snapshot's start is this moment when the task had none (the row's started_at, the transaction's, is a moment earlier).
 */
export async function startWithin(
  deps: Deps, transaction: Db, row: TaskRow, chooseRoute: ChooseRoute, writeLater?: (write: AlongsideWrite) => void,
): Promise<{ result: TaskSnapshot; events: NewTaskEvent[] }> {
  // A re-run after the start committed keeps the mode (and routing) it recorded.
  const route = row.mode === null ? chooseRoute(row) : { mode: row.mode };
  const metadata = route.routing && { routing: route.routing };
  const task = writeLater ? markStartedLater(transaction, row, route.mode, metadata, writeLater) : await markStarted(transaction, row, route.mode, metadata);
  return {
    events: [{
      type: 'WORKFLOW_STARTED', agentId: 'orchestrator', message: 'Task started',
      payload: startedContextPayload(task.context), dedupeKey: 'workflow-started',
    }],
    result: snapshotOf(deps, task),
  };
}

/** What the workflow knows of a task; the deadline runs from its first start. */
export function snapshotOf(deps: Deps, task: TaskRow): TaskSnapshot {
  const startedAtMs = task.started_at?.getTime() ?? Date.now();
  const settings = parseTaskSettings(task.context, task.options);
  const timeoutSeconds = typeof task.options.timeout_seconds === 'number' ? task.options.timeout_seconds : deps.config.taskTimeoutSeconds;
  return {
    id: task.id,
    tenantId: task.tenant_id,
    userId: task.user_id,
    sessionId: task.session_id,
    query: task.query,
    requestedMode: task.requested_mode,
    mode: task.mode ?? undefined,
    context: task.context,
    options: task.options,
    settings,
    createdAtMs: task.created_at.getTime(),
    startedAtMs,
    deadlineMs: startedAtMs + timeoutSeconds * 1000,
    timeoutSeconds,
    ...(task.schedule_id === null ? {} : { scheduleId: task.schedule_id }),
    ...(task.cost_budget_usd === null ? {} : { costPrices: highestPrices(deps, settings) }),
  };
}

/** The highest input and output prices among the models the task may call (its cost budget is checked at them). */
function highestPrices(deps: Deps, settings: TaskSettings): CostPrices {
  const pricing = deps.models.resolveCandidates(settings.models).map((candidate) => candidate.catalogModel.pricing);
  return {
    inputPerMillion: Math.max(0, ...pricing.map((price) => price.inputPerMillion)),
    outputPerMillion: Math.max(0, ...pricing.map((price) => price.outputPerMillion)),
  };
}

export interface TaskOutcome {
  mode: string;
  answer: AgentAnswer;
  agentsUsed: number;
  complexityScore: number | null;
  /** What the mode adds to the task's metadata (research: citations, verification, facts). */
  metadata?: Record<string, unknown>;
}

/** Stores the result and closes the event stream: final LLM_OUTPUT, WORKFLOW_COMPLETED, STREAM_END. */
export async function completeTask(deps: Deps, task: TaskSnapshot, outcome: TaskOutcome): Promise<void> {
  await changeTask(deps, task.id, 'workflow', async (transaction) => ({ events: await completeWithin(transaction, task, outcome) }));
}

/**
 * The completion inside the caller's transaction on the locked row; returns the events that close the
 * stream. A session without a title is marked for the titler (memory/session-titles.ts).
 */
export async function completeWithin(transaction: Db, task: TaskSnapshot, outcome: TaskOutcome): Promise<NewTaskEvent[]> {
  const { answer } = outcome;
  // `length`: the answer was cut at the output limit, which clients are told (the OpenAI layer's finish_reason).
  const finishReason = answer.finishReason?.replace('-', '_');
  await markCompleted(transaction, task.id, {
    result: storableText(answer.text), mode: outcome.mode, modelUsed: answer.model, provider: answer.provider,
    agentsUsed: outcome.agentsUsed, complexityScore: outcome.complexityScore,
    metadata: finishReason ? { ...outcome.metadata, finish_reason: finishReason } : outcome.metadata,
    sessionTitle: sessionTitleRequest(task),
  });
  return [
    {
      type: 'LLM_OUTPUT', agentId: 'final_output', message: answer.text, dedupeKey: 'final-output',
      payload: {
        model_used: answer.model, provider: answer.provider,
        usage: { input_tokens: answer.inputTokens, output_tokens: answer.outputTokens, total_tokens: answer.inputTokens + answer.outputTokens, cost_usd: answer.costUsd },
        ...(finishReason ? { finish_reason: finishReason } : {}),
      },
    },
    { type: 'WORKFLOW_COMPLETED', agentId: 'orchestrator', message: 'Task completed', dedupeKey: 'workflow-completed' },
    { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
  ];
}

/**
 * Records a failure (FAILED, or TIMEOUT for the wall-clock limit), with what the task produced before it when it
 * says (`partial`), and closes the event stream. A scheduled run that ran out of budget also pauses its schedule
 * (spec 3.3), in the same commit: no further run starts.
 */
export async function failTask(deps: Deps, taskId: string, status: 'FAILED' | 'TIMEOUT', reason: string, options: { overBudget?: boolean; partial?: PartialResult } = {}): Promise<void> {
  // The reason may quote anything that failed (a provider's answer, a tool's message): it is stored as text.
  const error = storableText(reason);
  await changeTask(deps, taskId, 'workflow', async (transaction, row) => {
    if (!UNFINISHED_STATUSES.includes(row.status)) return undefined;
    await markEnded(transaction, taskId, status, error, options.partial);
    const schedulePaused = options.overBudget && row.schedule_id !== null ? await pauseScheduleOverBudget(transaction, row.schedule_id, taskId, error) : [];
    return {
      events: [
        { type: 'ERROR_OCCURRED', agentId: 'orchestrator', message: error, payload: { status }, dedupeKey: 'task-error' },
        ...schedulePaused,
        { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
      ],
    };
  });
}

async function pauseScheduleOverBudget(transaction: Db, scheduleId: string, taskId: string, error: string): Promise<NewTaskEvent[]> {
  const reason = `Auto-paused: run ${taskId} exceeded its budget (${error})`;
  const pausedAt = await markSchedulePaused(transaction, scheduleId, reason);
  if (!pausedAt) return [];
  return [{ type: 'SCHEDULE_PAUSED', agentId: 'scheduler', message: reason, payload: { schedule_id: scheduleId, reason, paused_at: pausedAt.toISOString() }, dedupeKey: 'schedule-paused' }];
}

/** Records the cancellation the workflow honoured at `checkpoint` and closes the event stream. */
export async function finishCancelled(deps: Deps, taskId: string, checkpoint: string): Promise<void> {
  await changeTask(deps, taskId, 'workflow', async (transaction, row) => {
    if (!UNFINISHED_STATUSES.includes(row.status)) return undefined;
    await markEnded(transaction, taskId, 'CANCELLED', 'cancelled');
    return {
      events: [
        { type: 'WORKFLOW_CANCELLED', agentId: 'orchestrator', message: 'Task cancelled', payload: { checkpoint, was_paused: row.pause_requested }, dedupeKey: 'workflow-cancelled' },
        { type: 'STREAM_END', message: 'Stream ended', dedupeKey: 'stream-end' },
      ],
    };
  });
}
