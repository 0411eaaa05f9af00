import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { appendTaskEvents } from '../events/append-event.ts';
import { openEventWriter, type EventWriter } from '../events/event-writer.ts';
import { streamModelText, type ConversationMessage } from '../llm/stream-model-text.ts';
import { watchForCancel } from './cancel-watch.ts';
import { withDeadline } from './deadline.ts';
import type { AgentAnswer, TaskSnapshot } from './task-snapshot.ts';
import { releaseTokens, reserveTokens, settleTokens, type BudgetState, type ThresholdCrossing } from './token-budget.ts';

export interface AgentCall {
  agentId: string;
  /** Announced as a PROGRESS event before the agent starts. */
  progress?: string;
  system: string;
  messages: ConversationMessage[];
  maxOutputTokens?: number;
}

export type AgentOutcome = { answer: AgentAnswer } | { budgetExhausted: BudgetState };

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * One model call as a durable step (`prepare` builds the prompt inside it, so reads are not repeated on
 * replay). Its events and usage row are keyed by the step, so a re-run after a crash neither duplicates
 * them nor bills twice. The call reserves tokens first and does not start when a budget is spent; a
 * cancel request aborts it mid-stream.
 */
export async function callAgent(deps: Deps, task: TaskSnapshot, prepare: () => Promise<AgentCall>, stepName: string): Promise<AgentOutcome> {
  return DBOS.runStep(async () => {
    const stepKey = `${stepName}#${DBOS.stepID ?? 0}`;
    const callKey = `${task.id}:${stepKey}`;
    const cancel = new AbortController();
    const stopWatching = await watchForCancel(deps, task.id, cancel);
    try {
      cancel.signal.throwIfAborted();
      const call = await prepare();
      const events = await openEventWriter({
        db: deps.db, hub: deps.events, taskId: task.id, stepKey, partialIntervalMs: deps.config.events.partialIntervalMs,
      });
      const reservation = await reserveTokens(deps.db, deps.config, task, callKey, estimateTokens(call), call.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
      if (!reservation.granted) {
        await announceThresholds(deps, task, [{ ...reservation.exhausted, threshold: 100 }]);
        return { budgetExhausted: reservation.exhausted };
      }
      await announceStart(events, call);
      const result = await withDeadline(deps.config, task, cancel.signal, (abortSignal) => streamModelText(deps.models, {
        selection: {
          modelTier: task.context.model_tier as 'small' | 'medium' | 'large' | undefined,
          modelOverride: task.context.model_override as string | undefined,
          providerOverride: task.context.provider_override as string | undefined,
        },
        system: call.system,
        messages: call.messages,
        maxOutputTokens: reservation.maxOutputTokens,
        abortSignal,
        mockDelayMs: numberOrUndefined(task.context.mock_delay_ms),
        mockAnswerWords: numberOrUndefined(task.context.mock_answer_words),
        onDelta: (delta) => events.partial(call.agentId, delta),
      })).finally(() => events.flush()).catch(async (error) => {
        await releaseTokens(deps.db, callKey);
        throw error;
      });
      const crossings = await settleTokens(deps.db, deps.config, task, callKey, call.agentId, result);
      await announceThresholds(deps, task, crossings);
      await events.emit({
        type: 'AGENT_COMPLETED', agentId: call.agentId, message: 'Agent completed',
        payload: { model: result.model, provider: result.provider, input_tokens: result.inputTokens, output_tokens: result.outputTokens },
      });
      return { answer: { agentId: call.agentId, ...result } };
    } finally {
      stopWatching();
    }
  }, { name: stepName });
}

async function announceStart(events: EventWriter, call: AgentCall): Promise<void> {
  if (call.progress) await events.emit({ type: 'PROGRESS', agentId: call.agentId, message: call.progress, payload: { stage: 'execution' } });
  await events.emit({
    type: 'DATA_PROCESSING', agentId: call.agentId, message: 'Prepared the conversation context',
    payload: { history_messages: call.messages.length - 1 },
  });
  await events.emit({ type: 'AGENT_THINKING', agentId: call.agentId, message: 'Thinking about the request' });
  await events.emit({ type: 'AGENT_STARTED', agentId: call.agentId, message: 'Agent started' });
  await events.emit({ type: 'LLM_PROMPT', agentId: call.agentId, message: lastUserMessage(call.messages).slice(0, 500) });
}

/** BUDGET_THRESHOLD at 80 / 90 / 100 %, each once per task and scope. */
async function announceThresholds(deps: Deps, task: TaskSnapshot, crossings: ThresholdCrossing[]): Promise<void> {
  if (crossings.length === 0) return;
  await appendTaskEvents(deps.db, task.id, crossings.map((crossing) => ({
    type: 'BUDGET_THRESHOLD', agentId: 'budget',
    message: `${crossing.scope} token budget ${crossing.threshold}% used (${crossing.used} of ${crossing.budget})`,
    payload: { scope: crossing.scope, threshold: crossing.threshold, used: crossing.used, budget: crossing.budget },
    dedupeKey: `budget:${crossing.scope}:${crossing.threshold}`,
  })));
  deps.events.wake(task.id);
}

/** The same estimate the mock uses for input: one token per four characters. */
function estimateTokens(call: AgentCall): number {
  const characters = call.system.length + call.messages.reduce((total, message) => total + message.content.length, 0);
  return Math.ceil(characters / 4);
}

const numberOrUndefined = (value: unknown) => (typeof value === 'number' ? value : undefined);

function lastUserMessage(messages: ConversationMessage[]): string {
  return messages.findLast((message) => message.role === 'user')?.content ?? '';
}
