import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { openEventWriter, type EventWriter } from '../../events/event-writer.ts';
import type { ModelTier } from '../../llm/model-catalog.ts';
import type { ModelMessage } from 'ai';
import type { ModelTextResult } from '../../llm/stream-model-text.ts';
import type { SpentBudgetRule } from '../runtime/budget-policy.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { callModelWithinBudget, spentBudgetEvents, type BudgetedCall, type Closing, type ModelRequest, type Opening } from './budgeted-call.ts';
import { taskModelSelection, thresholdEvents } from './model-call.ts';
import type { BudgetState } from './token-budget.ts';
import type { AgentTools } from './tool-loop.ts';

/**
 * One agent's call: who it is (`agentId`, its role's prompt in `system`), what it may use (`tools`, the tool set
 * it carries), which models answer (`modelTier`) and how its budget is met (the task's and the session's token
 * budgets, `maxOutputTokens` per model call, `onSpentBudget`). Every workflow calls agents this way, through
 * runAgent (run-agent.ts), and every model call of theirs goes through callModelWithinBudget (budgeted-call.ts).
 */
export interface AgentCall {
  agentId: string;
  /** Announced as a PROGRESS event before the agent starts. */
  progress?: string;
  system: string;
  /** Plain turns; a vision step sends an image part beside its text. */
  messages: ModelMessage[];
  maxOutputTokens?: number;
  /** The tier of the models that answer (the catalog's priority list); default the task's. The task's overrides still win. */
  modelTier?: ModelTier;
  /** What a call refused for a spent budget does (runtime/budget-policy.ts); default `report`, to the caller. */
  onSpentBudget?: SpentBudgetRule;
  /** This agent's output is the task's answer: its deltas are marked so the OpenAI layer streams them. */
  finalAnswer?: boolean;
  /** Tells the mock provider which phase this is (decomposition, synthesis, …); real providers ignore it. */
  purpose?: string;
  /** Per-call scripting of the mock provider (e.g. `{ fail: true }` for a scripted failure). */
  mockScript?: Record<string, unknown>;
  /** The agent may call these tools (tool-loop.ts); without them it makes exactly one model call. */
  tools?: AgentTools;
  /** A client's own tools and output format (an OpenAI-layer direct turn): offered, never run; the calls are the answer. */
  clientTurn?: Pick<ModelRequest, 'tools' | 'toolChoice' | 'jsonAnswer'>;
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
  const outcome = await callModelWithinBudget(deps, task, {
    ...await agentModelCall(deps, task, stepKey, call),
    open: agentOpening(call, stepKey),
    settle: (result) => agentClosing(stepKey, { agentId: call.agentId, ...result }),
  }, cancel);
  if ('budgetExhausted' in outcome) return outcome;
  if ('declined' in outcome) throw new Error('an agent\'s opening never declines');
  return { answer: outcome.closed! };
}

/** The usage key of an agent's (first) model call. */
export const agentCallKey = (task: TaskSnapshot, stepKey: string) => `${task.id}:${stepKey}`;

/**
 * The agent's model call (its first, keyed by `stepKey`), streaming to the step's writer. The caller adds how it
 * opens and settles. `isFirstRun`: the caller knows no earlier run of the step wrote anything (event-writer.ts).
 */
export async function agentModelCall(deps: Deps, task: TaskSnapshot, stepKey: string, call: AgentCall, isFirstRun = false): Promise<BudgetedCall<AgentAnswer>> {
  return {
    agentId: call.agentId,
    callKey: agentCallKey(task, stepKey),
    request: agentRequest(deps, task, call),
    maxOutputTokens: maxOutputTokensOf(call),
    stream: { events: await openAgentEventWriter(deps, task, stepKey, call, isFirstRun), stepKey },
    onSpentBudget: 'report',
  };
}

/** The agent's opening commit: its first call's reservation with the opening events (or the 100 % threshold when a budget is spent). */
export function agentOpening(call: AgentCall, stepKey: string): Opening {
  return async (_transaction, _row, reserve) => {
    const reservation = await reserve();
    const events = reservation.granted ? keyedEvents(openingEvents(call), stepKey) : spentBudgetEvents(reservation.exhausted);
    return { events, reservation };
  };
}

/** The agent's closing commit: the last token text, the thresholds crossed and AGENT_COMPLETED, in that order, with the settlement. */
export function agentClosing(stepKey: string, answer: AgentAnswer): Closing<AgentAnswer> {
  return async (_transaction, _row, { crossings, lastDelta }) =>
    ({ events: [...lastDelta, ...thresholdEvents(crossings), agentCompletedEventOf(stepKey, answer)], result: answer });
}

export const agentCompletedEventOf = (stepKey: string, answer: AgentAnswer): NewTaskEvent =>
  ({ ...agentCompletedEvent(answer.agentId, answer), dedupeKey: `${stepKey}:completed` });

export const keyedEvents = (events: NewTaskEvent[], stepKey: string): NewTaskEvent[] =>
  events.map((event, index) => ({ ...event, dedupeKey: `${stepKey}:e${index}` }));

/** The writer of an agent step's token deltas and events, keyed by the step. */
export function openAgentEventWriter(deps: Deps, task: TaskSnapshot, stepKey: string, call: AgentCall, isFirstRun = false): Promise<EventWriter> {
  return openEventWriter({
    isFirstRun,
    db: deps.db, appends: deps.appends, taskId: task.id, stepKey, partialIntervalMs: deps.config.events.partialIntervalMs,
    partialMarks: call.finalAnswer ? { final_answer: true } : undefined,
    // An intermediate agent's text is progress, not the answer: its first delta waits like the rest.
    firstDeltaAtOnce: call.finalAnswer === true,
    previewFirstDelta: call.finalAnswer === true ? (text) => deps.events.preview(task.id, text) : undefined,
  });
}

/** What an agent sends to the model, with the task's mock knobs (only agent answers honour them). */
export function agentRequest(deps: Deps, task: TaskSnapshot, call: AgentCall): ModelRequest {
  const mockScript = call.tools ? { ...call.mockScript, toolCalls: task.settings.mock.toolCalls } : call.mockScript;
  return {
    selection: call.modelTier === undefined ? taskModelSelection(task) : { ...taskModelSelection(task), modelTier: call.modelTier },
    system: call.system,
    messages: call.messages,
    mockDelayMs: task.settings.mock.delayMs ?? deps.config.mockDelayMs,
    mockAnswerWords: task.settings.mock.answerWords,
    // The task's scripted tool calls (context.mock_tool_calls) are for agents that have tools.
    mockOptions: { purpose: call.purpose, ...mockScript },
    ...(task.settings.callSettings ? { callSettings: task.settings.callSettings } : {}),
    ...call.clientTurn,
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

function lastUserMessage(messages: ModelMessage[]): string {
  const content = messages.findLast((message) => message.role === 'user')?.content ?? '';
  if (typeof content === 'string') return content;
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [`[${part.type}]`])).join(' ');
}
