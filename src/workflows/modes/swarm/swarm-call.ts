import type { JSONSchema7 } from '@ai-sdk/provider';
import type { Static, TSchema } from 'typebox';
import type { Db } from '../../../db/database.ts';
import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { ModelTier } from '../../../llm/model-catalog.ts';
import type { ModelTextResult } from '../../../llm/stream-model-text.ts';
import { callModelWithinBudget, type Opening } from '../../agent-calls/budgeted-call.ts';
import { thresholdEvents } from '../../agent-calls/model-call.ts';
import { parseJsonAnswer } from '../../planning/decompose.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { parseModelAnswer } from '../research/model-answers/parse-model-answer.ts';
import type { SwarmPrompt } from './swarm-prompts.ts';

const SWARM_MAX_OUTPUT_TOKENS = 2048;

/** What a swarm call commits with its settlement: the answer's effect, or what is recorded of an answer that did not fit. */
export type Effect<S extends TSchema, T> = (transaction: Db, answer: { ok: true; value: Static<S> } | { ok: false; problem: string }, result: ModelTextResult) => Promise<{ events: NewTaskEvent[]; result: T }>;

export interface SwarmCall<S extends TSchema, T> {
  agentId: string;
  /** The step's name: it keys the call's reservation and usage row. */
  stepKey: string;
  prompt: SwarmPrompt;
  schema: S;
  tier: ModelTier;
  mock: Record<string, unknown>;
  /** Writes that share the reservation's commit (opening events). */
  opening?: NewTaskEvent[];
  effect: Effect<S, T>;
}

export type SwarmCallOutcome<T> = { applied: T; result: ModelTextResult } | { budgetExhausted: true };

/**
 * One swarm model call with a structured answer, inside the caller's step: the reservation (with the opening events),
 * the call through the one agent-call path (a spent budget pauses the task here), then the usage row and the answer's
 * effect in one commit, so the turn's writes land together or not at all.
 */
export async function askSwarmModel<S extends TSchema, T>(deps: Deps, task: TaskSnapshot, call: SwarmCall<S, T>, cancel: AbortSignal): Promise<SwarmCallOutcome<T>> {
  const open: Opening = async (_transaction, _row, reserve) => {
    const reservation = await reserve();
    return { events: reservation.granted ? call.opening ?? [] : [], reservation };
  };
  const outcome = await callModelWithinBudget<T>(deps, task, {
    agentId: call.agentId,
    callKey: `${task.id}:${call.stepKey}`,
    request: {
      selection: { ...task.settings.models, modelTier: task.settings.models.modelTier ?? call.tier },
      system: call.prompt.system,
      messages: [{ role: 'user', content: call.prompt.user }],
      responseSchema: call.schema as unknown as JSONSchema7,
      mockDelayMs: task.settings.mock.delayMs ?? deps.config.mockDelayMs,
      mockOptions: call.mock,
    },
    maxOutputTokens: SWARM_MAX_OUTPUT_TOKENS,
    onSpentBudget: { waitAt: call.stepKey },
    open,
    settle: (result) => {
      const parsed = parseModelAnswer(call.schema, parseJsonAnswer(result.text));
      return async (transaction, _row, { crossings }) => {
        const applied = await call.effect(transaction, parsed, result);
        return { events: [...thresholdEvents(crossings), ...applied.events], result: applied.result };
      };
    },
  }, cancel);
  if ('budgetExhausted' in outcome) return { budgetExhausted: true };
  if ('declined' in outcome) throw new Error('the swarm call was declined');
  return { applied: outcome.closed as T, result: outcome.result };
}
