import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { openEventWriter } from '../events/event-writer.ts';
import { recordUsage } from '../llm/record-usage.ts';
import { streamModelText, type ConversationMessage } from '../llm/stream-model-text.ts';
import { withDeadline } from './deadline.ts';
import type { AgentAnswer, TaskSnapshot } from './task-snapshot.ts';

export interface AgentCall {
  agentId: string;
  /** Announced as a PROGRESS event before the agent starts. */
  progress?: string;
  system: string;
  messages: ConversationMessage[];
}

/**
 * One model call as a durable step (`prepare` builds the prompt inside it, so reads are not repeated on replay): its events (AGENT_STARTED, LLM_PROMPT, LLM_PARTIAL deltas,
 * AGENT_COMPLETED) and its usage row are keyed by the step, so a re-run after a crash neither
 * duplicates them nor bills twice.
 */
export async function callAgent(deps: Deps, task: TaskSnapshot, prepare: () => Promise<AgentCall>, stepName: string): Promise<AgentAnswer> {
  return DBOS.runStep(async () => {
    const call = await prepare();
    const stepKey = `${stepName}#${DBOS.stepID ?? 0}`;
    const events = await openEventWriter({
      db: deps.db, hub: deps.events, taskId: task.id, stepKey, partialIntervalMs: deps.config.events.partialIntervalMs,
    });
    if (call.progress) await events.emit({ type: 'PROGRESS', agentId: call.agentId, message: call.progress, payload: { stage: 'execution' } });
    await events.emit({
      type: 'DATA_PROCESSING', agentId: call.agentId, message: 'Prepared the conversation context',
      payload: { history_messages: call.messages.length - 1 },
    });
    await events.emit({ type: 'AGENT_THINKING', agentId: call.agentId, message: 'Thinking about the request' });
    await events.emit({ type: 'AGENT_STARTED', agentId: call.agentId, message: 'Agent started' });
    await events.emit({ type: 'LLM_PROMPT', agentId: call.agentId, message: lastUserMessage(call.messages).slice(0, 500) });
    const result = await withDeadline(deps.config, task, (abortSignal) => streamModelText(deps.models, {
      selection: {
        modelTier: task.context.model_tier as 'small' | 'medium' | 'large' | undefined,
        modelOverride: task.context.model_override as string | undefined,
        providerOverride: task.context.provider_override as string | undefined,
      },
      system: call.system,
      messages: call.messages,
      abortSignal,
      mockDelayMs: numberOrUndefined(task.context.mock_delay_ms),
      mockAnswerWords: numberOrUndefined(task.context.mock_answer_words),
      onDelta: (delta) => events.partial(call.agentId, delta),
    })).finally(() => events.flush());
    await recordUsage(deps.db, `${task.id}:${stepKey}`, { taskId: task.id, ...task }, call.agentId, result);
    await events.emit({
      type: 'AGENT_COMPLETED', agentId: call.agentId, message: 'Agent completed',
      payload: { model: result.model, provider: result.provider, input_tokens: result.inputTokens, output_tokens: result.outputTokens },
    });
    return { agentId: call.agentId, ...result };
  }, { name: stepName });
}

const numberOrUndefined = (value: unknown) => (typeof value === 'number' ? value : undefined);

function lastUserMessage(messages: ConversationMessage[]): string {
  return messages.findLast((message) => message.role === 'user')?.content ?? '';
}
