import { sql } from 'kysely';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { AlongsideWrite } from '../../events/append-event.ts';
import type { ModelTextResult } from '../../llm/stream-model-text.ts';
import { usageRecordWrite } from '../../llm/record-usage.ts';
import type { TaskRow } from '../../db/schema.ts';
import type { TaskLock } from '../../task-state/change-task.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';

/** Below this many tokens of room for an answer, a budget counts as exhausted. */
const MIN_ANSWER_TOKENS = 16;
const THRESHOLDS = [80, 90, 100] as const;

/** Token budgets of the task and its session, and the run's cost budget in USD (a schedule's budget per run). */
export type BudgetScope = 'task' | 'session' | 'run';

/** `used` and `budget` are tokens, or USD for the `run` scope. */
export interface BudgetState { scope: BudgetScope; used: number; budget: number }

/**
 * The prices a task's cost budget is checked at: the highest input and output prices among the models its
 * calls may use (a call that falls back to another model may cost that much).
 */
export interface CostPrices { inputPerMillion: number; outputPerMillion: number }

export type Reservation =
  | { granted: true; maxOutputTokens: number }
  | { granted: false; exhausted: BudgetState };

export interface ThresholdCrossing extends BudgetState { threshold: number }

/**
 * Sets tokens aside for one model call under the task's and the session's budgets, and its largest possible
 * cost under the task's cost budget, in the caller's transaction, which holds the task row (changeTask). The
 * session row is locked too, and what calls in flight set aside counts as spent, so parallel agents cannot overrun
 * a budget together. The call's answer is capped to the room left: a call never starts that could exceed a budget
 * except by the error of the input estimate (chars / 4).
 */
export async function reserveTokensWithin(
  transaction: Db, config: Readonly<Config>, task: BudgetOwner, callKey: string, estimatedInput: number, wantedOutput: number,
  /** Takes the reservation's row to write with the change's events (changeTask's `alongside`) instead of now. */
  writeLater?: (write: AlongsideWrite) => void,
): Promise<Reservation> {
  const states = await lockBudgets(transaction, config, task, callKey);
  const tokenStates = states.filter((state) => state.scope !== 'run');
  const exhausted = tokenStates.find((state) => state.budget - state.used - estimatedInput < MIN_ANSWER_TOKENS);
  if (exhausted) return { granted: false, exhausted };
  const room = Math.min(...tokenStates.map((state) => state.budget - state.used));
  let maxOutputTokens = Math.min(wantedOutput, room - estimatedInput);
  const run = states.find((state) => state.scope === 'run');
  let costUsd = 0;
  if (run && task.costPrices) {
    const affordable = affordableOutput(task.costPrices, run, estimatedInput);
    if (affordable < MIN_ANSWER_TOKENS) return { granted: false, exhausted: run };
    maxOutputTokens = Math.min(maxOutputTokens, affordable);
    costUsd = priceOf(task.costPrices, estimatedInput, maxOutputTokens);
  }
  const write = transaction.insertInto('token_reservations')
    .values({ call_key: callKey, task_id: task.id, session_id: task.sessionId, tokens: estimatedInput + maxOutputTokens, cost_usd: costUsd })
    .onConflict((conflict) => conflict.column('call_key').doUpdateSet({ tokens: estimatedInput + maxOutputTokens, cost_usd: costUsd }));
  if (writeLater) writeLater(write);
  else await write.execute();
  return { granted: true, maxOutputTokens };
}

export interface CallEstimate { callKey: string; estimatedInput: number; wantedOutput: number }

/**
 * Sets tokens aside for several calls about to run at once (a swarm round's turns) in the caller's transaction, which
 * holds the task row, all or none: only while every token budget keeps `spare` tokens of room after them, so that
 * other calls (the task's own later ones, the session's other tasks) are not refused for tokens these merely hold.
 * Never under a cost budget, whose prices each call reserves exactly on its own. True when they were reserved.
 */
export async function reserveTogether(transaction: Db, config: Readonly<Config>, task: BudgetOwner, calls: CallEstimate[], spare: number): Promise<boolean> {
  if (calls.length === 0) return false;
  const states = await lockBudgets(transaction, config, task, undefined);
  if (states.some((state) => state.scope === 'run')) return false;
  const total = calls.reduce((sum, call) => sum + call.estimatedInput + call.wantedOutput, 0);
  if (states.some((state) => state.budget - state.used < total + spare)) return false;
  await transaction.insertInto('token_reservations')
    .values(calls.map((call) => ({ call_key: call.callKey, task_id: task.id, session_id: task.sessionId, tokens: call.estimatedInput + call.wantedOutput, cost_usd: 0 })))
    .onConflict((conflict) => conflict.column('call_key').doUpdateSet((eb) => ({ tokens: eb.ref('excluded.tokens'), cost_usd: 0 })))
    .execute();
  return true;
}

const priceOf = (limit: CostPrices, inputTokens: number, outputTokens: number) =>
  (inputTokens * limit.inputPerMillion + outputTokens * limit.outputPerMillion) / 1_000_000;

/** How many answer tokens the cost budget still pays for after the input; unlimited for a free model. */
function affordableOutput(limit: CostPrices, run: BudgetState, estimatedInput: number): number {
  const room = run.budget - run.used - priceOf(limit, estimatedInput, 0);
  if (room < 0) return 0;
  return limit.outputPerMillion === 0 ? Number.POSITIVE_INFINITY : Math.floor((room * 1_000_000) / limit.outputPerMillion);
}

/** Records the call's usage and frees its reservation in one transaction; returns budget thresholds crossed. */
export async function settleTokens(db: Db, config: Readonly<Config>, task: TaskSnapshot, callKey: string, agentId: string, result: ModelTextResult): Promise<ThresholdCrossing[]> {
  return db.transaction().execute((transaction) => settleTokensWithin(transaction, config, task, callKey, agentId, result));
}

/** settleTokens inside the caller's transaction (the one that also completes the task). */
export async function settleTokensWithin(transaction: Db, config: Readonly<Config>, task: TaskSnapshot, callKey: string, agentId: string, result: ModelTextResult): Promise<ThresholdCrossing[]> {
  const read = readWithLock.get(transaction);
  if (read) read.budgets = undefined;
  // One statement writes the usage row and releases the reservation, and reads the budgets as they stood before
  // it (its snapshot): without the call's reservation, and less the row it replaces when the call ran before a crash.
  const { rows } = await sql<BudgetRow & { replaced_tokens: number; replaced_cost: number }>`
    with released as (${reservationRelease(transaction, callKey)}),
      recorded as (${usageRecordWrite(transaction, callKey, { taskId: task.id, ...task }, agentId, result)})
    select budgets.*,
      coalesce(replaced.total_tokens, 0)::int8 as replaced_tokens, coalesce(replaced.cost_usd, 0)::float8 as replaced_cost
    from budget_usage(${task.id}::uuid, ${callKey}::text) budgets left join usage_records replaced on replaced.call_key = ${callKey}`.execute(transaction);
  const row = rows[0];
  return budgetStatesOf(config, row).flatMap((read) => {
    const [spent, replaced] = read.scope === 'run'
      ? [result.costUsd, Number(row.replaced_cost)] : [result.inputTokens + result.outputTokens, Number(row.replaced_tokens)];
    const withoutCall = read.used - replaced;
    const state = { ...read, used: withoutCall + spent };
    return THRESHOLDS
      .filter((threshold) => percent(withoutCall, state.budget) < threshold && percent(state.used, state.budget) >= threshold)
      .map((threshold) => ({ ...state, threshold }));
  });
}

/** Frees a call's reservation: a call that was not made, or a turn that will not make it. */
export async function releaseTokens(db: Db, callKey: string): Promise<void> {
  await reservationRelease(db, callKey).execute();
}

/** The delete that frees a call's reservation, run alone (releaseTokens) or inside a settlement's statement. */
const reservationRelease = (db: Db, callKey: string) => db.deleteFrom('token_reservations').where('call_key', '=', callKey);

/** What a reservation needs to know of its task: which budgets it draws on. */
export type BudgetOwner = Pick<TaskSnapshot, 'id' | 'sessionId' | 'costPrices'>;

/**
 * The budgets read in changeTask's lock (lockForCall), for `callKey`'s reservation; `budgets` is cleared when a
 * settlement in the same transaction (a tool turn's opening settles the turn before) changes what they count.
 */
const readWithLock = new WeakMap<Db, { callKey: string; budgets: BudgetRow | undefined }>();

/**
 * changeTask's lock for a change that reserves `callKey`'s tokens: the task row, then its session's (the order of
 * every task state change: src/task-state/change-task.ts), and the budgets, read after the lock with a snapshot of
 * their own (budget_usage_after_lock, migration 0040), so that a reservation another call committed while this one
 * waited for the lock counts. One round trip: the reservation then reads nothing more.
 */
export function lockForCall(callKey: string): TaskLock {
  return async (transaction, taskId) => {
    const { rows: [locked] } = await sql<TaskRow & { budgets: BudgetRow }>`
      with locked as materialized (
        select tasks.* from tasks join sessions on sessions.id = tasks.session_id
        where tasks.id = ${taskId} for no key update of tasks, sessions)
      select locked.*, to_jsonb(budgets) as budgets
      from locked cross join lateral budget_usage_after_lock(locked.id, ${callKey}::text) budgets`.execute(transaction);
    if (!locked) return undefined;
    const { budgets, ...task } = locked;
    readWithLock.set(transaction, { callKey, budgets });
    return task;
  };
}

/**
 * The budgets for a reservation, under the session's lock (taken after the task's, which the caller holds): those
 * lockForCall read, if nothing changed them since; else read now, in a statement of their own (after locking the
 * session row, when the caller's lock did not take it).
 */
async function lockBudgets(db: Db, config: Readonly<Config>, task: BudgetOwner, excludeCallKey: string | undefined): Promise<BudgetState[]> {
  const read = readWithLock.get(db);
  if (read?.budgets && read.callKey === excludeCallKey) return budgetStatesOf(config, read.budgets);
  if (!read) await sql`select 1 from sessions where id = ${task.sessionId} for no key update`.execute(db);
  return readBudgets(db, config, task, excludeCallKey);
}

/** Spent (usage rows) plus set aside (reservations of other calls) against each budget. */
async function readBudgets(db: Db, config: Readonly<Config>, task: BudgetOwner, excludeCallKey: string | undefined): Promise<BudgetState[]> {
  const { rows } = await sql<BudgetRow>`select * from budget_usage(${task.id}::uuid, ${excludeCallKey ?? null}::text)`.execute(db);
  return budgetStatesOf(config, rows[0]);
}

/** The budgets of a task and its session, and what each has used (migration 0040). */
type BudgetRow = { task_budget: number | null; session_budget: number; task_used: number; session_used: number; cost_budget: number | null; cost_used: number };

function budgetStatesOf(config: Readonly<Config>, row: BudgetRow): BudgetState[] {
  const states: BudgetState[] = [
    { scope: 'task', used: Number(row.task_used), budget: Number(row.task_budget ?? config.budgets.taskTokens) },
    { scope: 'session', used: Number(row.session_used), budget: Number(row.session_budget) },
  ];
  if (row.cost_budget !== null) states.push({ scope: 'run', used: Number(row.cost_used), budget: Number(row.cost_budget) });
  return states;
}

/**
 * `session token budget exhausted: 990 of 1000 tokens used`, `run cost budget exhausted: $0.009100 of $0.01 used`:
 * what is left is too little for the next call's input and a minimal answer.
 */
export function describeExhausted(state: BudgetState): string {
  return `${budgetName(state.scope)} exhausted: ${describeAmount(state)} used${state.scope === 'run' ? ', too little left for the next model call' : ''}`;
}

export const budgetName = (scope: BudgetScope) => (scope === 'run' ? 'run cost budget' : `${scope} token budget`);

export const describeAmount = (state: BudgetState) =>
  (state.scope === 'run' ? `$${state.used.toFixed(6)} of $${state.budget}` : `${state.used} of ${state.budget} tokens`);

const percent = (used: number, budget: number) => (budget <= 0 ? 100 : (used / budget) * 100);
