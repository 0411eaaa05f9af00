import type { TaskRow } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { currentStepId, takeArrivedRow } from '../../engine/engine.ts';
import { isTerminal } from '../../task-state/statuses.ts';
import { inAgentSpan } from '../agent-calls/agent-span.ts';
import { callModelWithinBudget, type Closing, type Opening } from '../agent-calls/budgeted-call.ts';
import { agentCompletedEventOf, agentModelCall, keyedEvents, openingEvents, type AgentCall } from '../agent-calls/call-agent.ts';
import { thresholdEvents } from '../agent-calls/model-call.ts';
import { buildSystemPrompt } from '../agent-calls/system-prompt.ts';
import { planSessionContext } from '../memory/session-context.ts';
import { withCancelWatch } from '../runtime/cancel-watch.ts';
import { TaskCancelledError } from '../runtime/control-errors.ts';
import { completeWithin, snapshotOf, startWithin, type ChooseRoute } from '../runtime/task-lifecycle.ts';
import { parseTaskSettings } from '../runtime/task-settings.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { modeEntryFor } from '../mode-table.ts';
import { ownConversation, simpleAgentCall, simpleOutcome } from './simple.ts';

export type AnswerAtOnce =
  /** Nothing written: the task needs the step-by-step path (paused or cancelled before it started, a history to summarise, a spent budget). */
  | { kind: 'declined' }
  | { kind: 'completed' }
  /** The task had ended before this run (a re-run after the completion committed, or a cancel while queued). */
  | { kind: 'ended' }
  /** A pause was requested while the agent answered: the answer waits at the pre_completion checkpoint. */
  | { kind: 'held'; task: TaskSnapshot; answer: AgentAnswer };

/**
 * A simple task in one durable step and two commits (issue 13): the start, its first checkpoint, the token
 * reservation and the opening events in one transaction; the model call; then the usage row, the settlement,
 * the final events and the status in another. Every write is keyed, so a re-run after a crash continues where
 * the last one stopped, as the step-by-step path does. Whatever this path cannot do in one go, it declines
 * before writing anything and the step-by-step path runs instead.
 */
export async function answerAtOnce(deps: Deps, taskId: string, chooseRoute: ChooseRoute): Promise<AnswerAtOnce> {
  const row = takeArrivedRow(taskId) ?? await deps.db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
  if (isTerminal(row.status)) return { kind: row.status === 'COMPLETED' ? 'completed' : 'ended' };
  if (!canAnswerAtOnce(row, chooseRoute)) return { kind: 'declined' };
  // Read before the start, it becomes the started task's snapshot in the opening commit (startingOpening).
  const task = snapshotOf(deps, row);
  const call = await prepareCall(deps, task);
  if (!call) return { kind: 'declined' };
  const stepKey = `answer#${currentStepId()}`;
  // The opening commit declines a task whose cancel was requested (canAnswerAtOnce on the locked row), so the
  // watch needs no read of its own first; a task not yet started has no token text of an earlier run to skip.
  return inAgentSpan(task, call, () => withCancelWatch(deps, taskId, async (cancel) => {
    const outcome = await callModelWithinBudget<Completion>(deps, task, {
      ...await agentModelCall(deps, task, stepKey, call, row.started_at === null),
      open: startingOpening(deps, task, call, stepKey, chooseRoute),
      settle: (result) => completingClosing(deps, task, stepKey, { agentId: call.agentId, ...result }),
    }, cancel);
    if (!('result' in outcome)) return { kind: 'declined' };
    const completion = outcome.closed!;
    if (completion.kind === 'cancelled') throw new TaskCancelledError('pre_completion');
    if (completion.kind === 'held') return { kind: 'held', task, answer: completion.answer };
    deps.titles.nudge(task);
    return { kind: 'completed' };
  }, false));
}

type Completion = { kind: 'completed' | 'cancelled' } | { kind: 'held'; answer: AgentAnswer };

/**
 * Starts the task with its tokens reserved and the agent announced, in one transaction; declines (nothing
 * written) when a control request came in meanwhile or a budget is spent.
 */
function startingOpening(deps: Deps, task: TaskSnapshot, call: AgentCall, stepKey: string, chooseRoute: ChooseRoute): Opening {
  return async (transaction, row, reserve, writeLater) => {
    if (!canAnswerAtOnce(row, chooseRoute) || isTerminal(row.status)) return undefined;
    const reservation = await reserve();
    if (!reservation.granted) return { events: [], reservation };
    const start = await startWithin(deps, transaction, row, chooseRoute, writeLater);
    Object.assign(task, start.result);
    return { events: [...start.events, ...keyedEvents(openingEvents(call), stepKey)], reservation };
  };
}

/** The usage, the agent's completion and, unless a pause or cancel came in while it answered, the task's. */
function completingClosing(deps: Deps, task: TaskSnapshot, stepKey: string, answer: AgentAnswer): Closing<Completion> {
  return async (transaction, locked, { crossings, lastDelta }) => {
    const agentEvents = [...lastDelta, ...thresholdEvents(crossings), agentCompletedEventOf(stepKey, answer)];
    if (locked.cancel_requested) return { events: agentEvents, result: { kind: 'cancelled' } };
    if (locked.pause_requested) return { events: agentEvents, result: { kind: 'held', answer } };
    return { events: [...agentEvents, ...await completeWithin(transaction, task, simpleOutcome(answer, task))], result: { kind: 'completed' } };
  };
}

/**
 * A task that asks for approval waits at its gate on the step-by-step path; a task whose settings choose another
 * mode (a template, research) runs it there.
 */
function canAnswerAtOnce(row: TaskRow, chooseRoute: ChooseRoute): boolean {
  if (row.pause_requested || row.cancel_requested || (row.mode ?? chooseRoute(row).mode) !== 'simple') return false;
  const settings = parseTaskSettings(row.context, row.options);
  // A JSON answer or a strict call is checked before the task completes, and a wrong one fails the task: the step-by-step path does that.
  const checked = settings.clientTurn?.output !== undefined || (settings.clientTurn?.strictTools?.length ?? 0) > 0;
  return !settings.requireApproval && !checked && modeEntryFor(settings, 'simple')?.mode === 'simple';
}

/** The simple agent's call, when its history fits without a summary (reads only). */
async function prepareCall(deps: Deps, task: TaskSnapshot): Promise<AgentCall | undefined> {
  const system = buildSystemPrompt(task.settings);
  const own = ownConversation(task);
  if (own) return simpleAgentCall(task, system, own);
  const plan = await planSessionContext(deps, task, system);
  return 'context' in plan ? simpleAgentCall(task, system, plan.context) : undefined;
}
