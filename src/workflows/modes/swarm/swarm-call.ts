import type { JSONSchema7 } from '@ai-sdk/provider';
import type { Static, TSchema } from 'typebox';
import type { Db } from '../../../db/database.ts';
import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { ModelTier } from '../../../llm/model-catalog.ts';
import type { ModelTextResult } from '../../../llm/stream-model-text.ts';
import { callModelWithinBudget, estimateRequest, type Opening, type PriorReservation } from '../../agent-calls/budgeted-call.ts';
import { thresholdEvents } from '../../agent-calls/model-call.ts';
import { parseJsonAnswer } from '../../planning/decompose.ts';
import { changeTask } from '../../../task-state/change-task.ts';
import { releaseTokens, settleTokensWithin } from '../../agent-calls/token-budget.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { parseModelAnswer } from '../research/model-answers/parse-model-answer.ts';
import type { SwarmPrompt } from './swarm-prompts.ts';

export const SWARM_MAX_OUTPUT_TOKENS = 2048;

/** A structured answer: its value, or what is wrong with it. */
export type ParsedAnswer<V> = { ok: true; value: V } | { ok: false; problem: string };

/** What a swarm call commits with its settlement: the answer's effect, given what `prepare` did first. */
export type Effect<S extends TSchema, P, T> = (transaction: Db, answer: ParsedAnswer<Static<S>>, result: ModelTextResult, prepared: P) => Promise<{ events: NewTaskEvent[]; result: T }>;

export interface SwarmCall<S extends TSchema, P, T> {
  agentId: string;
  /** The step's name: it keys the call's reservation and usage row. */
  stepKey: string;
  prompt: SwarmPrompt;
  schema: S;
  tier: ModelTier;
  mock: Record<string, unknown>;
  /** Writes that share the reservation's commit (opening events). */
  opening?: NewTaskEvent[];
  /** Tokens the round set aside for this call (round-reservation.ts), which spare it a commit of its own. */
  reserved?: PriorReservation;
  /** Work between the answer and its commit (an agent's tool call), so that what it returns commits with the answer. */
  prepare(answer: ParsedAnswer<Static<S>>): Promise<P>;
  effect: Effect<S, P, T>;
}

export const swarmCallKey = (task: Pick<TaskSnapshot, 'id'>, stepKey: string) => `${task.id}:${stepKey}`;

const promptMessages = (prompt: SwarmPrompt) => ({ system: prompt.system, messages: [{ role: 'user' as const, content: prompt.user }] });

/** The input tokens a swarm call's prompt is reserved for. */
export const estimatePrompt = (prompt: SwarmPrompt) => estimateRequest(promptMessages(prompt));

export type SwarmCallOutcome<T> = { applied: T; result: ModelTextResult } | { budgetExhausted: true };

/**
 * One swarm model call with a structured answer, inside the caller's step, in two commits: the reservation (with the
 * opening events), then, once the answer is in and `prepare` has run on it, the usage row with the answer's effect
 * and `prepare`'s records. A turn's writes land together or not at all; the call goes through the one agent-call
 * path (a spent budget pauses the task here) and settles `later`, in the effect's commit.
 */
export async function askSwarmModel<S extends TSchema, P, T>(deps: Deps, task: TaskSnapshot, call: SwarmCall<S, P, T>, cancel: AbortSignal): Promise<SwarmCallOutcome<T>> {
  const open: Opening = async (_transaction, _row, reserve) => {
    const reservation = await reserve();
    return { events: reservation.granted ? call.opening ?? [] : [], reservation };
  };
  const callKey = swarmCallKey(task, call.stepKey);
  const outcome = await callModelWithinBudget(deps, task, {
    agentId: call.agentId,
    callKey,
    request: {
      selection: { ...task.settings.models, modelTier: task.settings.models.modelTier ?? call.tier },
      ...promptMessages(call.prompt),
      responseSchema: call.schema as unknown as JSONSchema7,
      mockDelayMs: task.settings.mock.delayMs ?? deps.config.mockDelayMs,
      mockOptions: call.mock,
    },
    maxOutputTokens: SWARM_MAX_OUTPUT_TOKENS,
    onSpentBudget: { waitAt: call.stepKey },
    open,
    reserved: call.reserved,
    settle: () => 'later',
  }, cancel);
  if ('budgetExhausted' in outcome) return { budgetExhausted: true };
  if ('declined' in outcome) throw new Error('the swarm call was declined');
  const { result } = outcome;
  const answer = parseModelAnswer(call.schema, parseJsonAnswer(result.text));
  let prepared: P;
  try {
    prepared = await call.prepare(answer);
  } catch (error) {
    await releaseTokens(deps.db, callKey);
    throw error;
  }
  const applied = await changeTask(deps, task.id, 'workflow', async (transaction) => {
    const crossings = await settleTokensWithin(transaction, deps.config, task, callKey, call.agentId, result);
    const effect = await call.effect(transaction, answer, result, prepared);
    return { events: [...outcome.lastDelta, ...thresholdEvents(crossings), ...effect.events], result: effect.result };
  });
  return { applied: applied as T, result };
}
