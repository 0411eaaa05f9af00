import type { TaskRow } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { isTerminal } from '../../task-state/statuses.ts';
import { changeTask } from '../../task-state/change-task.ts';
import { inAgentSpan } from '../agent-calls/agent-span.ts';
import { agentCompletedEvent, agentModelCall, maxOutputTokensOf, openAgentEventWriter, openingEvents, type AgentCall } from '../agent-calls/call-agent.ts';
import { TaskCancelledError } from '../runtime/control-errors.ts';
import { estimateTokens, streamReservedCall, thresholdEvents } from '../agent-calls/model-call.ts';
import { planSessionContext } from '../memory/session-context.ts';
import { ownConversation, simpleAgentCall, simpleOutcome } from './simple.ts';
import { buildSystemPrompt } from '../agent-calls/system-prompt.ts';
import { completeWithin, snapshotOf, startWithin } from '../runtime/task-lifecycle.ts';
import { parseTaskSettings } from '../runtime/task-settings.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { reserveTokensWithin, settleTokensWithin } from '../agent-calls/token-budget.ts';
import { withCancelWatch } from '../runtime/cancel-watch.ts';

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
export async function answerAtOnce(deps: Deps, taskId: string, chooseMode: (requestedMode: string | null) => string): Promise<AnswerAtOnce> {
  const row = await deps.db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
  if (isTerminal(row.status)) return { kind: row.status === 'COMPLETED' ? 'completed' : 'ended' };
  if (!canAnswerAtOnce(row, chooseMode)) return { kind: 'declined' };
  const draft = snapshotOf(deps, row);
  const call = await prepareCall(deps, draft);
  if (!call) return { kind: 'declined' };
  const stepKey = `answer#${currentStepId()}`;
  const callKey = `${taskId}:${stepKey}`;
  const started = await start(deps, draft, call, callKey, stepKey, chooseMode);
  if (!started) return { kind: 'declined' };
  const { task, maxOutputTokens } = started;
  return inAgentSpan(task, call, () => withCancelWatch(deps, taskId, async (cancel) => {
    const events = await openAgentEventWriter(deps, task, stepKey, call);
    const result = await streamReservedCall(deps, task, callKey, { ...agentModelCall(deps, task, stepKey, call, events), maxOutputTokens }, cancel)
      .catch(async (error: unknown) => {
        await events.flush();
        throw error;
      });
    // The last token text goes out first in the completing transaction, before the events that close the stream.
    const lastDelta = await events.takeBuffered();
    const answer = { agentId: call.agentId, ...result };
    const completed = await changeTask(deps, taskId, 'workflow', async (transaction, locked) => {
      const crossings = await settleTokensWithin(transaction, deps.config, task, callKey, call.agentId, result);
      const agentEvents = [...lastDelta, ...thresholdEvents(crossings), { ...agentCompletedEvent(call.agentId, result), dedupeKey: `${stepKey}:completed` }];
      if (locked.cancel_requested || locked.pause_requested) return { events: agentEvents, result: locked.cancel_requested ? 'cancelled' : 'held' };
      return { events: [...agentEvents, ...await completeWithin(transaction, task, simpleOutcome(answer))], result: 'completed' };
    });
    if (completed === 'cancelled') throw new TaskCancelledError('pre_completion');
    if (completed === 'held') return { kind: 'held', task, answer };
    deps.titles.nudge();
    return { kind: 'completed' };
  }));
}

/** A task that asks for approval waits at its gate on the step-by-step path; a template task runs its nodes there. */
function canAnswerAtOnce(row: TaskRow, chooseMode: (requestedMode: string | null) => string): boolean {
  if (row.pause_requested || row.cancel_requested || (row.mode ?? chooseMode(row.requested_mode)) !== 'simple') return false;
  const settings = parseTaskSettings(row.context, row.options);
  return !settings.requireApproval && settings.template === undefined;
}

/** The simple agent's call, when its history fits without a summary (reads only). */
async function prepareCall(deps: Deps, task: TaskSnapshot): Promise<AgentCall | undefined> {
  const system = buildSystemPrompt(task.settings);
  const own = ownConversation(task);
  if (own) return simpleAgentCall(task, system, own);
  const plan = await planSessionContext(deps, task, system);
  return 'context' in plan ? simpleAgentCall(task, system, plan.context) : undefined;
}

/**
 * Starts the task with its tokens reserved and the agent announced, in one transaction; undefined (nothing
 * written) when a control request came in meanwhile or a budget is spent.
 */
async function start(deps: Deps, draft: TaskSnapshot, call: AgentCall, callKey: string, stepKey: string, chooseMode: (requestedMode: string | null) => string) {
  const estimatedInput = estimateTokens(call.system, ...call.messages.map((message) => message.content));
  const wantedOutput = maxOutputTokensOf(call);
  return changeTask(deps, draft.id, 'workflow', async (transaction, row) => {
    if (!canAnswerAtOnce(row, chooseMode) || isTerminal(row.status)) return undefined;
    const reservation = await reserveTokensWithin(transaction, deps.config, draft, callKey, estimatedInput, wantedOutput);
    if (!reservation.granted) return undefined;
    const started = await startWithin(deps, transaction, row, chooseMode);
    const opening: NewTaskEvent[] = openingEvents(call).map((event, index) => ({ ...event, dedupeKey: `${stepKey}:e${index}` }));
    return { events: [...started.events, ...opening], result: { task: started.result, maxOutputTokens: reservation.maxOutputTokens } };
  });
}
