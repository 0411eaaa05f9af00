import { retryUntilDatabaseAnswers } from '../../db/retry.ts';
import type { JSONSchema7 } from '@ai-sdk/provider';
import type { Deps } from '../../deps.ts';
import { modelCalls } from '../../observability/metrics.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import type { ModelSelection } from '../../llm/select-models.ts';
import { streamModelText, type ConversationMessage, type ModelFallback, type ModelTextResult, type StreamModelTextRequest } from '../../llm/stream-model-text.ts';
import { appendEvents } from '../../task-state/change-task.ts';
import { withDeadline } from '../runtime/deadline.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { budgetName, describeAmount, releaseTokens, reserveTokens, settleTokens, type BudgetState, type ThresholdCrossing } from './token-budget.ts';

export interface ModelCall {
  agentId: string;
  system: string;
  messages: ConversationMessage[];
  maxOutputTokens: number;
  /** Called once the tokens are reserved, just before the model is called. */
  onStart?: () => Promise<void>;
  onDelta?: (delta: string) => void;
  /** Awaited before the next model is tried after one failed without answering (see recoveryEvent). */
  onFallback?: (fallback: ModelFallback) => Promise<void>;
  /** Only agent answers honour the task's mock knobs; internal calls (summaries, titles) answer at once. */
  mockDelayMs?: number;
  mockAnswerWords?: number;
  /** The phase this call serves (decomposition, synthesis, …), so the mock answers it in kind. */
  mockPurpose?: string;
  /** Further per-call scripting of the mock (a plan, a failure, tool calls). */
  mockScript?: Record<string, unknown>;
  /** Structured output: the JSON schema the answer must follow. */
  responseSchema?: JSONSchema7;
}

export type ModelCallOutcome =
  | { result: ModelTextResult; crossings: ThresholdCrossing[] }
  | { budgetExhausted: BudgetState };

/**
 * One model call of a task under its budgets: reserves tokens (refusing when a budget is spent), streams
 * within the task's deadline and `cancel`, and records the usage row under `callKey` (stable across a
 * step's re-run). Announcing thresholds is left to the caller, which knows whether the stream is still open.
 */
export async function callModelWithinBudget(deps: Deps, task: TaskSnapshot, callKey: string, call: ModelCall, cancel: AbortSignal): Promise<ModelCallOutcome> {
  const durably = <T>(what: string, work: () => Promise<T>) => retryUntilDatabaseAnswers(work, { logger: deps.logger, what });
  const estimatedInput = estimateTokens(call.system, ...call.messages.map((message) => message.content));
  const reservation = await durably('reserve tokens', () => reserveTokens(deps.db, deps.config, task, callKey, estimatedInput, call.maxOutputTokens));
  if (!reservation.granted) return { budgetExhausted: reservation.exhausted };
  const result = await streamReservedCall(deps, task, callKey, { ...call, maxOutputTokens: reservation.maxOutputTokens }, cancel);
  // Usage and settlement are keyed by the call: written once however often the database makes us try.
  const crossings = await durably('record usage', () => settleTokens(deps.db, deps.config, task, callKey, call.agentId, result));
  return { result, crossings };
}

/**
 * Streams a call whose tokens are reserved (`call.maxOutputTokens` is what the reservation granted), within
 * the task's deadline and `cancel`; a call that fails gives its reservation back.
 */
export async function streamReservedCall(deps: Deps, task: TaskSnapshot, callKey: string, call: ModelCall, cancel: AbortSignal): Promise<ModelTextResult> {
  return streamReservedRequest(deps, task, callKey, {
    selection: taskModelSelection(task),
    system: call.system,
    messages: call.messages,
    maxOutputTokens: call.maxOutputTokens,
    mockDelayMs: call.mockDelayMs,
    mockAnswerWords: call.mockAnswerWords,
    mockOptions: { purpose: call.mockPurpose, ...call.mockScript },
    onDelta: call.onDelta,
    onFallback: call.onFallback,
    responseSchema: call.responseSchema,
  }, cancel, call.onStart);
}

/** streamReservedCall for a request built by the caller (the tool loop's turns, with tools and tool messages). */
export async function streamReservedRequest(
  deps: Deps, task: TaskSnapshot, callKey: string, request: Omit<StreamModelTextRequest, 'abortSignal'>, cancel: AbortSignal, onStart?: () => Promise<void>,
): Promise<ModelTextResult> {
  try {
    await onStart?.();
    const phase = String(request.mockOptions?.purpose ?? 'agent');
    modelCalls.inc({ phase });
    const telemetry = { functionId: phase, metadata: { task_id: task.id, call_key: callKey } };
    return await withDeadline(deps.config, task, cancel, (abortSignal) => streamModelText(deps.models, { ...request, abortSignal, telemetry }));
  } catch (error) {
    await retryUntilDatabaseAnswers(() => releaseTokens(deps.db, callKey), { logger: deps.logger, what: 'release tokens' });
    throw error;
  }
}

export function taskModelSelection(task: TaskSnapshot): ModelSelection {
  return task.settings.models;
}

/** The context window of the model a task's calls start with (its first candidate). */
export function taskContextWindow(deps: Deps, task: TaskSnapshot): number {
  return deps.models.resolveCandidates(taskModelSelection(task))[0].catalogModel.contextWindow;
}

/** The same estimate the mock uses for input: one token per four characters. */
export function estimateTokens(...texts: string[]): number {
  return Math.ceil(texts.reduce((total, text) => total + text.length, 0) / 4);
}

/** BUDGET_THRESHOLD at 80 / 90 / 100 %, each once per task and scope. */
export async function announceThresholds(deps: Deps, task: TaskSnapshot, crossings: ThresholdCrossing[]): Promise<void> {
  if (crossings.length === 0) return;
  await appendEvents(deps, task.id, 'workflow', thresholdEvents(crossings));
}

/**
 * ERROR_RECOVERY (spec 6.2) for a model that failed before answering and the one tried next. Keyed by the
 * call and attempt: a step re-run after a crash that meets the same failure records it once.
 */
export function recoveryEvent(stepKey: string, agentId: string, fallback: ModelFallback): NewTaskEvent {
  const failed = `${fallback.failed.provider}/${fallback.failed.model}`;
  const next = `${fallback.next.provider}/${fallback.next.model}`;
  return {
    type: 'ERROR_RECOVERY', agentId,
    message: `Model ${failed} failed; trying ${next}`,
    payload: {
      recovery: 'model_fallback', attempt: fallback.attempt,
      failed_provider: fallback.failed.provider, failed_model: fallback.failed.model,
      next_provider: fallback.next.provider, next_model: fallback.next.model,
      error: fallback.error.slice(0, 500),
    },
    dedupeKey: `${stepKey}:fallback${fallback.attempt}`,
  };
}

/** Keyed by scope and threshold, so each is recorded once per task whoever announces it. */
export function thresholdEvents(crossings: ThresholdCrossing[]): NewTaskEvent[] {
  return crossings.map((crossing) => ({
    type: 'BUDGET_THRESHOLD', agentId: 'budget',
    message: `${budgetName(crossing.scope)} ${crossing.threshold}% used (${describeAmount(crossing)})`,
    payload: { scope: crossing.scope, threshold: crossing.threshold, used: crossing.used, budget: crossing.budget },
    dedupeKey: `budget:${crossing.scope}:${crossing.threshold}`,
  }));
}
