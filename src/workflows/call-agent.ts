import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { openEventWriter, type EventWriter } from '../events/event-writer.ts';
import type { ConversationMessage } from '../llm/stream-model-text.ts';
import { callModelWithinBudget, recoveryEvent, thresholdEvents, withCancelWatch } from './model-call.ts';
import type { AgentAnswer, TaskSnapshot } from './task-snapshot.ts';
import type { BudgetState } from './token-budget.ts';
import { runTaskStep } from './task-step.ts';

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
    const stepKey = `${stepName}#${DBOS.stepID ?? 0}`;
    const call = await prepare();
    const events = await openEventWriter({
      db: deps.db, hub: deps.events, logger: deps.logger, taskId: task.id, stepKey, partialIntervalMs: deps.config.events.partialIntervalMs,
      partialMarks: call.finalAnswer ? { final_answer: true } : undefined,
    });
    const outcome = await callModelWithinBudget(deps, task, `${task.id}:${stepKey}`, {
      agentId: call.agentId,
      system: call.system,
      messages: call.messages,
      maxOutputTokens: call.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      onStart: () => announceStart(events, call),
      onDelta: (delta) => events.partial(call.agentId, delta),
      onFallback: (fallback) => events.emit([recoveryEvent(stepKey, call.agentId, fallback)]),
      mockDelayMs: numberOrUndefined(task.context.mock_delay_ms) ?? deps.config.mockDelayMs,
      mockAnswerWords: numberOrUndefined(task.context.mock_answer_words),
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
    await events.emit([...thresholdEvents(outcome.crossings), {
      type: 'AGENT_COMPLETED', agentId: call.agentId, message: 'Agent completed',
      payload: { model: result.model, provider: result.provider, input_tokens: result.inputTokens, output_tokens: result.outputTokens },
    }]);
    return { answer: { agentId: call.agentId, ...result } };
  }));
}

/** The events before the model call, in one commit (their dedupe keys stay positional, as when sent one by one). */
async function announceStart(events: EventWriter, call: AgentCall): Promise<void> {
  const progress = call.progress ? [{ type: 'PROGRESS', agentId: call.agentId, message: call.progress, payload: { stage: 'execution' } }] : [];
  await events.emit([
    ...progress,
    {
      type: 'DATA_PROCESSING', agentId: call.agentId, message: 'Prepared the conversation context',
      payload: { history_messages: call.messages.length - 1 },
    },
    { type: 'AGENT_THINKING', agentId: call.agentId, message: 'Thinking about the request' },
    { type: 'AGENT_STARTED', agentId: call.agentId, message: 'Agent started' },
    { type: 'LLM_PROMPT', agentId: call.agentId, message: lastUserMessage(call.messages).slice(0, 500) },
  ]);
}

const numberOrUndefined = (value: unknown) => (typeof value === 'number' ? value : undefined);

function lastUserMessage(messages: ConversationMessage[]): string {
  return messages.findLast((message) => message.role === 'user')?.content ?? '';
}
