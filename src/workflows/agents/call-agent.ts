import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { openEventWriter, type EventWriter } from '../../events/event-writer.ts';
import type { ConversationMessage, ModelTextResult } from '../../llm/stream-model-text.ts';
import { changeTask } from '../../task-state/change-task.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';
import { estimateTokens, recoveryEvent, streamReservedCall, thresholdEvents, withCancelWatch, type ModelCall } from './model-call.ts';
import { reserveTokensWithin, settleTokensWithin, type BudgetState } from './token-budget.ts';

export interface AgentCall {
  agentId: string;
  /** Announced as a PROGRESS event before the agent starts. */
  progress?: string;
  system: string;
  messages: ConversationMessage[];
  maxOutputTokens?: number;
  /** This agent's output is the task's answer: its deltas are marked so the OpenAI layer streams them. */
  finalAnswer?: boolean;
  /** Tells the mock provider which phase this is (decomposition, synthesis, …); real providers ignore it. */
  purpose?: string;
}

export type AgentOutcome = { answer: AgentAnswer } | { budgetExhausted: BudgetState };

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * One model call as a durable step (`prepare` builds the prompt inside it, so reads are not repeated on
 * replay). A cancel request aborts it mid-stream.
 */
export async function callAgent(deps: Deps, task: TaskSnapshot, prepare: () => Promise<AgentCall>, stepName: string): Promise<AgentOutcome> {
  return runTaskStep(deps, stepName, () => withCancelWatch(deps, task.id, async (cancel) => {
    const call = await prepare();
    return runAgent(deps, task, call, `${stepName}#${currentStepId()}`, cancel);
  }));
}

/**
 * One agent's model call inside the caller's durable step, in two commits: the token reservation with the
 * opening events, then the usage row, the settlement, the last token text and AGENT_COMPLETED. Everything is
 * keyed by `stepKey` (stable across a re-run of the step), so a re-run after a crash neither duplicates
 * events nor bills twice. The call does not start when a budget is spent.
 */
export async function runAgent(deps: Deps, task: TaskSnapshot, call: AgentCall, stepKey: string, cancel: AbortSignal): Promise<AgentOutcome> {
  const callKey = `${task.id}:${stepKey}`;
  const reservation = await reserveWithOpening(deps, task, call, stepKey, callKey);
  if (!reservation.granted) return { budgetExhausted: reservation.exhausted };
  const events = await openAgentEventWriter(deps, task, stepKey, call);
  const result = await streamReservedCall(deps, task, callKey, { ...agentModelCall(deps, task, stepKey, call, events), maxOutputTokens: reservation.maxOutputTokens }, cancel)
    .catch(async (error: unknown) => {
      await events.flush();
      throw error;
    });
  // The last token text, the thresholds crossed and the completion go out in one commit, in that order.
  const lastDelta = await events.takeBuffered();
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    const crossings = await settleTokensWithin(transaction, deps.config, task, callKey, call.agentId, result);
    return { events: [...lastDelta, ...thresholdEvents(crossings), { ...agentCompletedEvent(call.agentId, result), dedupeKey: `${stepKey}:completed` }] };
  });
  return { answer: { agentId: call.agentId, ...result } };
}

async function reserveWithOpening(deps: Deps, task: TaskSnapshot, call: AgentCall, stepKey: string, callKey: string) {
  const estimatedInput = estimateTokens(call.system, ...call.messages.map((message) => message.content));
  const reservation = await changeTask(deps, task.id, 'workflow', async (transaction) => {
    const granted = await reserveTokensWithin(transaction, deps.config, task, callKey, estimatedInput, maxOutputTokensOf(call));
    const events = granted.granted
      ? keyedEvents(openingEvents(call), stepKey)
      : thresholdEvents([{ ...granted.exhausted, threshold: 100 }]);
    return { events, result: granted };
  });
  return reservation!;
}

export const keyedEvents = (events: NewTaskEvent[], stepKey: string): NewTaskEvent[] =>
  events.map((event, index) => ({ ...event, dedupeKey: `${stepKey}:e${index}` }));

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
    mockDelayMs: task.settings.mock.delayMs ?? deps.config.mockDelayMs,
    mockAnswerWords: task.settings.mock.answerWords,
    mockPurpose: call.purpose,
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

function lastUserMessage(messages: ConversationMessage[]): string {
  return messages.findLast((message) => message.role === 'user')?.content ?? '';
}
