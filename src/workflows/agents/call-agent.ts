import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { openEventWriter, type EventWriter } from '../../events/event-writer.ts';
import type { ConversationMessage, ModelTextResult } from '../../llm/stream-model-text.ts';
import { callModelWithinBudget, recoveryEvent, thresholdEvents, withCancelWatch, type ModelCall } from './model-call.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import type { BudgetState } from './token-budget.ts';
import { runTaskStep } from '../runtime/task-step.ts';

export interface AgentCall {
  agentId: string;
  /** Announced as a PROGRESS event before the agent starts. */
  progress?: string;
  system: string;
  messages: ConversationMessage[];
  maxOutputTokens?: number;
  /** This agent's output is the task's answer: its deltas are marked so the OpenAI layer streams them. */
  finalAnswer?: boolean;
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
  return runTaskStep(deps, stepName, () => withCancelWatch(deps, task.id, async (cancel) => {
    const stepKey = `${stepName}#${currentStepId()}`;
    const call = await prepare();
    const events = await openAgentEventWriter(deps, task, stepKey, call);
    const outcome = await callModelWithinBudget(deps, task, `${task.id}:${stepKey}`, {
      ...agentModelCall(deps, task, stepKey, call, events),
      onStart: () => events.emit(openingEvents(call)),
    }, cancel).catch(async (error) => {
      await events.flush();
      throw error;
    });
    if ('budgetExhausted' in outcome) {
      await events.emit(thresholdEvents([{ ...outcome.budgetExhausted, threshold: 100 }]));
      return outcome;
    }
    const { result } = outcome;
    // The last token text, the thresholds crossed and the completion go out in one commit, in that order.
    await events.emit([...thresholdEvents(outcome.crossings), agentCompletedEvent(call.agentId, result)]);
    return { answer: { agentId: call.agentId, ...result } };
  }));
}

/** The writer of an agent step's token deltas and events, keyed by the step. */
export function openAgentEventWriter(deps: Deps, task: TaskSnapshot, stepKey: string, call: AgentCall): Promise<EventWriter> {
  return openEventWriter({
    db: deps.db, appends: deps.appends, taskId: task.id, stepKey, partialIntervalMs: deps.config.events.partialIntervalMs,
    partialMarks: call.finalAnswer ? { final_answer: true } : undefined,
  });
}

/** The model call an agent makes: its deltas and fallbacks go to the step's writer. */
export function agentModelCall(deps: Deps, task: TaskSnapshot, stepKey: string, call: AgentCall, events: EventWriter): ModelCall {
  return {
    agentId: call.agentId,
    system: call.system,
    messages: call.messages,
    maxOutputTokens: maxOutputTokensOf(call),
    onDelta: (delta) => events.partial(call.agentId, delta),
    onFallback: (fallback) => events.emit([recoveryEvent(stepKey, call.agentId, fallback)]),
    mockDelayMs: numberOrUndefined(task.context.mock_delay_ms) ?? deps.config.mockDelayMs,
    mockAnswerWords: numberOrUndefined(task.context.mock_answer_words),
  };
}

export const maxOutputTokensOf = (call: AgentCall) => call.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;

/** The events before the model call, in one commit, without dedupe keys (the caller keys them by position). */
export function openingEvents(call: AgentCall): NewTaskEvent[] {
  const progress = call.progress ? [{ type: 'PROGRESS', agentId: call.agentId, message: call.progress, payload: { stage: 'execution' } }] : [];
  return [
    ...progress,
    {
      type: 'DATA_PROCESSING', agentId: call.agentId, message: 'Prepared the conversation context',
      payload: { history_messages: call.messages.length - 1 },
    },
    { type: 'AGENT_THINKING', agentId: call.agentId, message: 'Thinking about the request' },
    { type: 'AGENT_STARTED', agentId: call.agentId, message: 'Agent started' },
    { type: 'LLM_PROMPT', agentId: call.agentId, message: lastUserMessage(call.messages).slice(0, 500) },
  ];
}

export function agentCompletedEvent(agentId: string, result: ModelTextResult): NewTaskEvent {
  return {
    type: 'AGENT_COMPLETED', agentId, message: 'Agent completed',
    payload: { model: result.model, provider: result.provider, input_tokens: result.inputTokens, output_tokens: result.outputTokens },
  };
}

const numberOrUndefined = (value: unknown) => (typeof value === 'number' ? value : undefined);

function lastUserMessage(messages: ConversationMessage[]): string {
  return messages.findLast((message) => message.role === 'user')?.content ?? '';
}
