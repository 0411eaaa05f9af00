import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { openEventWriter, type EventWriter } from '../../events/event-writer.ts';
import type { ConversationMessage, ModelTextResult } from '../../llm/stream-model-text.ts';
import { changeTask } from '../../task-state/change-task.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { allowForToolApprovalWaits } from '../runtime/tool-approval.ts';
import { estimateTokens, recoveryEvent, streamReservedCall, thresholdEvents, type ModelCall } from './model-call.ts';
import { reserveTokensWithin, settleTokensWithin, type BudgetState } from './token-budget.ts';
import type { AgentTools } from './tool-loop.ts';

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
  /** Per-call scripting of the mock provider (e.g. `{ fail: true }` for a scripted failure). */
  mockScript?: Record<string, unknown>;
  /** The agent may call these tools (tool-loop.ts); without them it makes exactly one model call. */
  tools?: AgentTools;
}

export type AgentOutcome = { answer: AgentAnswer } | { budgetExhausted: BudgetState };

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * One agent's single model call inside the caller's durable step, in two commits: the token reservation with
 * the opening events, then the usage row, the settlement, the last token text and AGENT_COMPLETED. Everything
 * is keyed by `stepKey` (stable across a re-run of the step), so a re-run after a crash neither duplicates
 * events nor bills twice. The call does not start when a budget is spent.
 */
export async function runSingleCall(deps: Deps, task: TaskSnapshot, call: AgentCall, stepKey: string, cancel: AbortSignal): Promise<AgentOutcome> {
  const callKey = agentCallKey(task, stepKey);
  const reservation = await reserveWithOpening(deps, task, call, stepKey, callKey);
  if (!reservation.granted) return { budgetExhausted: reservation.exhausted };
  const events = await openAgentEventWriter(deps, task, stepKey, call);
  const result = await streamReservedCall(deps, task, callKey, { ...agentModelCall(deps, task, stepKey, call, events), maxOutputTokens: reservation.maxOutputTokens }, cancel)
    .catch(async (error: unknown) => {
      await events.flush();
      throw error;
    });
  const answer = { agentId: call.agentId, ...result };
  await completeAgent(deps, task, { stepKey, callKey, result, answer, lastDelta: await events.takeBuffered() });
  return { answer };
}

/** The usage key of an agent's (first) model call. */
export const agentCallKey = (task: TaskSnapshot, stepKey: string) => `${task.id}:${stepKey}`;

export interface AgentCompletion {
  stepKey: string;
  /** The last model call: its usage is recorded and its reservation freed. */
  callKey: string;
  result: ModelTextResult;
  /** What the agent answers (for a tool loop, the sum of its turns). */
  answer: AgentAnswer;
  /** The step's token text still buffered (EventWriter.takeBuffered). */
  lastDelta: NewTaskEvent[];
}

/** The agent's closing commit: the last token text, the thresholds crossed and AGENT_COMPLETED, in that order, with the settlement. */
export async function completeAgent(deps: Deps, task: TaskSnapshot, completion: AgentCompletion): Promise<void> {
  const { stepKey, callKey, result, answer, lastDelta } = completion;
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    const crossings = await settleTokensWithin(transaction, deps.config, task, callKey, answer.agentId, result);
    return { events: [...lastDelta, ...thresholdEvents(crossings), agentCompletedEventOf(stepKey, answer)] };
  });
}

export const agentCompletedEventOf = (stepKey: string, answer: AgentAnswer): NewTaskEvent =>
  ({ ...agentCompletedEvent(answer.agentId, answer), dedupeKey: `${stepKey}:completed` });

/**
 * The agent's opening commit: its first call's reservation with the opening events (or the 100 % threshold when a
 * budget is spent). It reads the task row, and with it the time spent waiting for tool-call approvals.
 */
export async function reserveWithOpening(deps: Deps, task: TaskSnapshot, call: AgentCall, stepKey: string, callKey: string) {
  const estimatedInput = estimateTokens(call.system, ...call.messages.map((message) => message.content));
  const reservation = await changeTask(deps, task.id, 'workflow', async (transaction, row) => {
    allowForToolApprovalWaits(task, row.approval_wait_ms);
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
    // An intermediate agent's text is progress, not the answer: its first delta waits like the rest.
    firstDeltaAtOnce: call.finalAnswer === true,
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
    // The task's scripted tool calls (context.mock_tool_calls) are for agents that have tools.
    mockScript: call.tools ? { ...call.mockScript, toolCalls: task.settings.mock.toolCalls } : call.mockScript,
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
