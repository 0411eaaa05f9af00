import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import type { ModelSelection } from '../../llm/select-models.ts';
import type { ModelFallback } from '../../llm/stream-model-text.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { budgetName, describeAmount, type ThresholdCrossing } from './token-budget.ts';

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
