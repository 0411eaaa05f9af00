import type { Db } from '../../db/database.ts';
import { retryUntilDatabaseAnswers } from '../../db/retry.ts';
import type { TaskRow } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import type { AlongsideWrite, NewTaskEvent } from '../../events/append-event.ts';
import type { EventWriter } from '../../events/event-writer.ts';
import { CapacityWaitError } from '../../llm/capacity-queue.ts';
import { streamModelText, type ModelTextResult, type StreamModelTextRequest } from '../../llm/stream-model-text.ts';
import { modelCalls } from '../../observability/metrics.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { isInsideStep } from '../../engine/engine.ts';
import { waitForCapacity } from '../runtime/capacity-wait.ts';
import { isPassingFailure, waitOutOutage } from '../runtime/outage-wait.ts';
import { isOpenAiConversation } from '../runtime/started-context.ts';
import { meetSpentBudget, type SpentBudgetRule } from '../runtime/budget-policy.ts';
import { allowForWaitsInSteps, withDeadline } from '../runtime/deadline.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { estimateTokens, recoveryEvent, thresholdEvents } from './model-call.ts';
import { lockForCall, releaseTokens, reserveTokensWithin, settleTokensWithin, type BudgetState, type Reservation, type ThresholdCrossing } from './token-budget.ts';

/** What is sent to the model; the budget decides `maxOutputTokens`, the call's stream decides the deltas' target. */
export type ModelRequest = Omit<StreamModelTextRequest, 'abortSignal' | 'telemetry' | 'maxOutputTokens' | 'onDelta' | 'onFallback'>;

/**
 * The writes that share the reservation's transaction (the task row locked). `reserve` sets the call's tokens
 * aside; the opening decides what else commits with it (an agent's opening events, a tool turn's rows and the
 * settlement of the turn before) and returns undefined when the call must not start (nothing is written). The
 * reservation's row is written with the events, last: nothing the opening does after `reserve` may read reservations.
 * `writeLater` takes other writes to make in the events' statement, on the same terms (nothing may read what they write).
 */
export type Opening = (
  transaction: Db, row: TaskRow, reserve: () => Promise<Reservation>, writeLater: (write: AlongsideWrite) => void,
) => Promise<{ events: NewTaskEvent[]; reservation: Reservation } | undefined>;

/** What the settlement's transaction commits beside the usage row: the closing events (after the last token text) and a result. */
export type Closing<T> = (transaction: Db, row: TaskRow, settled: { crossings: ThresholdCrossing[]; lastDelta: NewTaskEvent[] }) => Promise<{ events: NewTaskEvent[]; result: T }>;

export interface BudgetedCall<T> {
  agentId: string;
  /** Keys the reservation and the usage row: stable across a re-run of the step, so nothing is billed twice. */
  callKey: string;
  request: ModelRequest;
  /** The longest answer wanted; the reservation may grant less. */
  maxOutputTokens: number;
  /** Where token deltas and model fallbacks go (the step's event writer and key); an internal call streams nowhere. */
  stream?: { events: EventWriter; stepKey: string; firstDeltaPrefix?: string };
  onSpentBudget: SpentBudgetRule;
  /** Default: the reservation alone, and the 100 % threshold when a budget is spent. */
  open?: Opening;
  /**
   * Tokens a commit before the call already set aside under `callKey` (a swarm round's, for all its turns): used
   * without opening when the request's estimate fits them, else the call opens as usual.
   */
  reserved?: PriorReservation;
  /**
   * Chosen once the answer is known: the settlement's commit, or `later` when the caller settles the usage in its own
   * next commit (a tool turn's, with the next turn's reservation). Default: the usage and the thresholds crossed.
   */
  settle?: (result: ModelTextResult) => Closing<T> | 'later';
}

/** A reservation made ahead of the call: the input it was estimated for and the answer it allows. */
export interface PriorReservation { estimatedInput: number; maxOutputTokens: number }

export type BudgetedOutcome<T> =
  /** `closed` is the closing's result; undefined when the call was settled `later`. */
  | { result: ModelTextResult; closed: T | undefined; lastDelta: NewTaskEvent[] }
  | { budgetExhausted: BudgetState }
  /** The opening declined to start: nothing was written. */
  | { declined: true };

/**
 * The one budgeted model call of a task, which every agent, turn and internal call (decomposition, history
 * summary) goes through: the reservation under the task's and the session's budgets in one commit, the spent-budget
 * policy when it is refused (runtime/budget-policy.ts), the stream within the task's deadline and `cancel` (the
 * step's cancel watch, runtime/cancel-watch.ts) with its deltas to the step's writer, then the usage row and the
 * thresholds crossed in another commit. A call that fails gives its reservation back.
 */
export async function callModelWithinBudget<T = undefined>(deps: Deps, task: TaskSnapshot, call: BudgetedCall<T>, cancel: AbortSignal): Promise<BudgetedOutcome<T>> {
  if (call.reserved && estimateRequest(call.request) <= call.reserved.estimatedInput) {
    return streamAndSettle(deps, task, call, call.reserved.maxOutputTokens, cancel);
  }
  for (;;) {
    const opened = await openCall(deps, task, call);
    if (opened === undefined) return { declined: true };
    if (opened.granted) return streamAndSettle(deps, task, call, opened.maxOutputTokens, cancel);
    if (await meetSpentBudget(deps, task, opened.exhausted, call.onSpentBudget) === 'report') return { budgetExhausted: opened.exhausted };
  }
}

async function openCall<T>(deps: Deps, task: TaskSnapshot, call: BudgetedCall<T>): Promise<Reservation | undefined> {
  const estimatedInput = estimateRequest(call.request);
  const open = call.open ?? reservationAlone;
  return changeTask(deps, task.id, 'workflow', async (transaction, row) => {
    allowForWaitsInSteps(task, row);
    // The reservation's row is written with the opening's events, in their statement.
    const alongside: AlongsideWrite[] = [];
    const writeLater = (write: AlongsideWrite) => { alongside.push(write); };
    const reserve = () => reserveTokensWithin(transaction, deps.config, task, call.callKey, estimatedInput, call.maxOutputTokens, writeLater);
    const opened = await open(transaction, row, reserve, writeLater);
    return opened && { events: opened.events, result: opened.reservation, alongside };
  }, { lock: lockForCall(call.callKey) });
}

/** The reservation, with `events` (a phase's PROGRESS) in its commit once the call is granted; the 100 % threshold when refused. */
export const reservationWith = (events: NewTaskEvent[]): Opening => async (_transaction, _row, reserve) => {
  const reservation = await reserve();
  return { events: reservation.granted ? events : spentBudgetEvents(reservation.exhausted), reservation };
};

const reservationAlone = reservationWith([]);

/** BUDGET_THRESHOLD at 100 % for a budget that refused a call. */
export const spentBudgetEvents = (exhausted: BudgetState): NewTaskEvent[] => thresholdEvents([{ ...exhausted, threshold: 100 }]);

async function streamAndSettle<T>(deps: Deps, task: TaskSnapshot, call: BudgetedCall<T>, maxOutputTokens: number, cancel: AbortSignal): Promise<BudgetedOutcome<T>> {
  const result = await streamReserved(deps, task, call, maxOutputTokens, cancel);
  // The last token text goes out in the closing commit, before the events that close the agent.
  const lastDelta = await call.stream?.events.takeBuffered() ?? [];
  const closing = call.settle?.(result) ?? settlementAlone;
  if (closing === 'later') return { result, closed: undefined, lastDelta };
  const closed = await changeTask(deps, task.id, 'workflow', async (transaction, row) => {
    const crossings = await settleTokensWithin(transaction, deps.config, task, call.callKey, call.agentId, result);
    return closing(transaction, row, { crossings, lastDelta });
  });
  return { result, closed, lastDelta: [] };
}

const settlementAlone: Closing<never> = async (_transaction, _row, { crossings, lastDelta }) =>
  ({ events: [...lastDelta, ...thresholdEvents(crossings)], result: undefined as never });

async function streamReserved<T>(deps: Deps, task: TaskSnapshot, call: BudgetedCall<T>, maxOutputTokens: number, cancel: AbortSignal): Promise<ModelTextResult> {
  const phase = String(call.request.mockOptions?.purpose ?? 'agent');
  // Inside a step the call may park its task for capacity (runtime/capacity-wait.ts) or through its providers' outage
  // (runtime/outage-wait.ts); parked, it gives its reservation back.
  const capacityWaiter = isInsideStep() ? { callKey: call.callKey } : undefined;
  try {
    modelCalls.inc({ phase });
    const telemetry = { functionId: phase, metadata: { task_id: task.id, call_key: call.callKey } };
    for (;;) {
      try {
        return await withDeadline(deps.config, task, cancel, (abortSignal) =>
          streamModelText(deps.models, { ...call.request, ...streamTarget(call), maxOutputTokens, abortSignal, telemetry, tenantId: task.tenantId, capacityWaiter }));
      } catch (error) {
        if (error instanceof CapacityWaitError) await waitForCapacity(deps, task, call, error);
        else if (capacityWaiter && isPassingFailure(error) && waitsOutOutages(deps, task)) await waitOutOutage(deps, task, call, error);
        else throw error;
      }
    }
  } catch (error) {
    await call.stream?.events.flush();
    await retryUntilDatabaseAnswers(() => releaseTokens(deps.db, call.callKey), { logger: deps.logger, what: 'release tokens' });
    throw error;
  }
}

/**
 * A task of the native API waits out its providers' outage; one answering an OpenAI-layer request does not: its
 * caller holds a request open and expects, as from any OpenAI-style proxy, an error it can act on once retries and
 * fallbacks are spent.
 */
const waitsOutOutages = (deps: Deps, task: TaskSnapshot) => deps.models.traffic.settings.outageWaitMs > 0 && !isOpenAiConversation(task.context);

function streamTarget<T>(call: BudgetedCall<T>): Pick<StreamModelTextRequest, 'onDelta' | 'onFallback'> {
  const { stream } = call;
  if (!stream) return {};
  let prefix = stream.firstDeltaPrefix ?? '';
  return {
    onDelta: (delta) => {
      stream.events.partial(call.agentId, prefix + delta);
      prefix = '';
    },
    onFallback: (fallback) => stream.events.emit([recoveryEvent(stream.stepKey, call.agentId, fallback)]),
  };
}

/** The input tokens a request is reserved for (chars / 4). */
export const estimateRequest = (request: Pick<ModelRequest, 'system' | 'messages'>) =>
  estimateTokens(request.system ?? '', ...request.messages.map(messageText));

const messageText = (message: ModelRequest['messages'][number]) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content, withoutImageBytes));

/**
 * An image counts as about what providers bill for one (OpenAI: 765 tokens for a 1024-pixel image at high
 * detail), not as the JSON of its bytes, which would reserve thousands of times more.
 */
const IMAGE_ESTIMATE_CHARS = 3_000;
const withoutImageBytes = (key: string, value: unknown) =>
  ((key === 'image' || key === 'data') && (value instanceof Uint8Array || (typeof value === 'object' && value !== null && 'type' in value && (value as { type?: unknown }).type === 'Buffer'))
    ? 'x'.repeat(IMAGE_ESTIMATE_CHARS) : value);
