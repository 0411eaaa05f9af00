import type { Db } from '../../../db/database.ts';
import type { SwarmAgentStatus } from '../../../db/schema.ts';
import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { ModelTextResult } from '../../../llm/stream-model-text.ts';
import type { ModelTier } from '../../../llm/model-catalog.ts';
import { modelTiers } from '../../../llm/model-catalog-schema.ts';
import { changeTask } from '../../../task-state/change-task.ts';
import type { PriorReservation } from '../../agent-calls/budgeted-call.ts';
import { releaseTokens } from '../../agent-calls/token-budget.ts';
import { insertToolCallRows } from '../../agent-calls/tool-call-queries.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import { readControl, type ControlFlags } from '../../runtime/checkpoint.ts';
import { endsTheTask } from '../../runtime/control-errors.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { AgentActionSchema, type AgentAction } from './swarm-answers.ts';
import { askSwarmModel, swarmCallKey } from './swarm-call.ts';
import { timeIsUp, turnProgress } from './round-reservation.ts';
import { swarmMock, taskListEvent } from './swarm-events.ts';
import { agentPrompt, type AgentView } from './swarm-prompts.ts';
import {
  hasUnread, insertMessages, insertTurn, insertWorkspaceEntry, LEAD, markRead, readAgents, readTasks, readTurn, turnStepName, updateAgent, updateTask,
  type SwarmAgent,
} from './swarm-queries.ts';
import { tokensUsed } from './swarm-findings.ts';
import { agentView, type Turn } from './turn-context.ts';
import { findingsOf, runTurnTools, type ToolRun, type TurnTools } from './turn-tools.ts';

/** What a turn leaves for the round: the agent's status after it (what it found is in the swarm's tables). */
export interface TurnOutcome {
  agent: string;
  status: SwarmAgentStatus;
  /** The action taken; `timed_out` when the agent's time was up before its turn. */
  action: string;
  /** Model calls the turn made (0 when the agent had no turn to take). */
  modelCalls: number;
}

/** A turn's outcome with what the round reads after it, all as recorded by the step, so a replay decides the same. */
export interface PlayedTurn extends TurnOutcome {
  /** Messages wait for the lead (a human's, or an agent's): it decides this round. */
  leadHasMail: boolean;
  /** Tokens of the task's model calls once the turn ended (spec 8: max_total_tokens). */
  tokens: number;
  /** When the turn ended (spec 8: max_wall_clock_minutes). */
  endedAtMs: number;
  /** Pause and cancel as the turn ended: the next round's checkpoint honours them without a read of its own. */
  control: ControlFlags;
}

/**
 * One agent's turn in a round, as one durable step: one budgeted model call whose answer is the agent's action; the
 * tool it asks for runs (through its role's tool set) before the turn's commit, which records the usage, the action's
 * effect (a tool's row, a message, a workspace entry, going idle) and its events together. The turn is keyed by
 * (task, agent, round): a re-run after a crash that finds it recorded replays it without calling the model again.
 * A model that fails fails the agent, not the swarm (spec 4.2 rule 9).
 */
export function takeTurn(deps: Deps, task: TaskSnapshot, name: string, round: number, reserved: PriorReservation | undefined): Promise<PlayedTurn> {
  const stepKey = turnStepName(name, round);
  return runTaskStep(deps, stepKey, () => withCancelWatch(deps, task.id, async (cancel) => {
    const outcome = await turnOf(deps, task, name, round, reserved, cancel);
    const [leadHasMail, tokens, control] = await Promise.all([hasUnread(deps.db, task.id, LEAD, round), tokensUsed(deps.db, task.id), readControl(deps, task.id)]);
    return { ...outcome, leadHasMail, tokens, endedAtMs: Date.now(), control };
  }));
}

async function turnOf(deps: Deps, task: TaskSnapshot, name: string, round: number, reserved: PriorReservation | undefined, cancel: AbortSignal): Promise<TurnOutcome> {
  const stepKey = turnStepName(name, round);
  const [team, recorded] = await Promise.all([readAgents(deps.db, task.id), readTurn(deps.db, task.id, name, round)]);
  const agent = team.find((candidate) => candidate.name === name);
  if (agent && recorded) return recordedOutcome(agent, recorded);
  if (!agent || agent.status !== 'active') return { agent: name, status: agent?.status ?? 'shutdown', action: 'none', modelCalls: 0 };
  const turn: Turn = { deps, task, agent, team, round, stepKey };
  if (timeIsUp(deps, task, agent)) {
    await failAgent(turn, `timed out after agent_timeout_seconds (${deps.config.swarm.agentTimeoutSeconds})`);
    return { agent: name, status: 'failed', action: 'timed_out', modelCalls: 0 };
  }
  try {
    return await playTurn(turn, reserved, cancel);
  } catch (error) {
    if (endsTheTask(error) || deps.handingOver.aborted) throw error;
    return failAgent(turn, error instanceof Error ? error.message : String(error));
  }
}

async function playTurn(turn: Turn, reserved: PriorReservation | undefined, cancel: AbortSignal): Promise<TurnOutcome> {
  const { deps, task, agent, round, stepKey } = turn;
  const view = await agentView(turn);
  const outcome = await askSwarmModel(deps, task, {
    agentId: agent.name, stepKey, prompt: agentPrompt(view), schema: AgentActionSchema, tier: tierOf(agent),
    mock: swarmMock(task.context, 'swarm-agent', agent.name),
    opening: [turnProgress(agent.name, view.turn, round, stepKey)],
    reserved,
    prepare: (answer) => (answer.ok ? runTurnTools(turn, view, answer.value, cancel) : Promise.resolve({})),
    effect: (transaction, answer, result, tools) => applyAction(turn, view, transaction, answer.ok ? answer.value : { action: 'invalid' as never, reasoning: answer.problem }, result, tools),
  }, cancel);
  if ('budgetExhausted' in outcome) throw new Error('the swarm\'s budget is spent');
  return outcome.applied.outcome;
}

const tierOf = (agent: SwarmAgent): ModelTier => modelTiers.find((tier) => tier === agent.modelTier) ?? 'medium';

interface Applied {
  outcome: TurnOutcome;
}

/** The action's effect, in the commit that records the call's usage: every write of the turn lands together. */
async function applyAction(turn: Turn, view: AgentView, transaction: Db, action: AgentAction, result: ModelTextResult, tools: TurnTools): Promise<{ events: NewTaskEvent[]; result: Applied }> {
  const { task, agent, round, stepKey } = turn;
  const lastTurn = view.turn >= view.maxTurns;
  // The last turn's tool would run for nothing: the agent goes idle with what it has.
  const effect = lastTurn && action.action === 'tool_call'
    ? { result: 'not run: the turn limit is reached', events: [] }
    : await actionEffect(turn, view, transaction, action, tools.asked);
  const findings = findingsOf(view, action);
  const answeredBy = { model: result.model, provider: result.provider, inputTokens: result.inputTokens, outputTokens: result.outputTokens, costUsd: result.costUsd, attempts: result.attempts };
  await insertTurn(transaction, task.id, { agent: agent.name, round, action, result: effect.result, answeredBy });
  await markRead(transaction, task.id, view.inbox.map((message) => message.id), round);
  const events = [...effect.events];
  if (tools.findingsFile) {
    await insertToolCallRows(transaction, tools.findingsFile.record.row ? [tools.findingsFile.record.row] : []);
    events.push(tools.findingsFile.invoked, ...tools.findingsFile.record.events);
  }
  if (findings !== undefined) {
    await updateAgent(transaction, task.id, agent.name, { status: 'idle', findings, turns: view.turn });
    if (agent.assignment) await updateTask(transaction, task.id, agent.assignment, { status: 'completed' });
    events.push(
      { type: 'AGENT_COMPLETED', agentId: agent.name, message: findings.slice(0, 2000), payload: { task_id: agent.assignment, turns: view.turn }, dedupeKey: `${stepKey}:completed` },
      taskListEvent(await readTasks(transaction, task.id), stepKey),
    );
    return { events, result: { outcome: { agent: agent.name, status: 'idle', action: action.action, modelCalls: 1 } } };
  }
  await updateAgent(transaction, task.id, agent.name, { turns: view.turn });
  return { events, result: { outcome: { agent: agent.name, status: 'active', action: action.action, modelCalls: 1 } } };
}

interface Effect {
  result: string;
  events: NewTaskEvent[];
}

async function actionEffect(turn: Turn, view: AgentView, transaction: Db, action: AgentAction, tool: ToolRun | undefined): Promise<Effect> {
  const { task, agent, round, stepKey } = turn;
  switch (action.action) {
    case 'tool_call': {
      if (!tool) return { result: `tool ${action.tool ?? '(none)'} is not one of your tools (${view.tools.join(', ') || 'none'})`, events: [] };
      await insertToolCallRows(transaction, tool.record.row ? [tool.record.row] : []);
      return { result: '', events: [tool.invoked, ...tool.record.events] };
    }
    case 'publish_data': {
      const content = (action.data ?? '').trim();
      if (content === '') return { result: 'nothing published: data was empty', events: [] };
      const topic = action.topic?.trim() || 'findings';
      await insertWorkspaceEntry(transaction, task.id, `${agent.name}:${round}`, { author: agent.name, topic, content, round });
      return { result: `published to ${topic}`, events: [{ type: 'WORKSPACE_UPDATED', agentId: agent.name, message: `${agent.name} published ${topic}`, payload: { topic, round }, dedupeKey: `${stepKey}:published` }] };
    }
    case 'send_message': return sendMessage(turn, view, transaction, action);
    case 'idle': return { result: 'idle', events: [] };
    default: return { result: `the answer was not a valid action: ${action.reasoning ?? ''}`.trim(), events: [] };
  }
}

async function sendMessage(turn: Turn, view: AgentView, transaction: Db, action: AgentAction): Promise<Effect> {
  const { task, agent, round, stepKey } = turn;
  const to = action.to?.trim() ?? '';
  const body = (action.message ?? '').trim();
  const known = to === LEAD || view.teammates.some((teammate) => teammate.name === to);
  if (!known) return { result: `not sent: ${to || '(nobody)'} is not a teammate or the lead`, events: [] };
  if (body === '') return { result: 'not sent: the message was empty', events: [] };
  if (view.messagesLeft <= 0) return { result: `not sent: the limit of ${turn.deps.config.swarm.maxMessagesPerAgent} messages is reached`, events: [] };
  await insertMessages(transaction, task.id, [{ id: `${agent.name}:${round}`, sender: agent.name, recipient: to, body, sentRound: round }]);
  return {
    result: `sent to ${to}`,
    events: [{ type: 'MESSAGE_SENT', agentId: agent.name, message: body.slice(0, 2000), payload: { from: agent.name, to, round }, dedupeKey: `${stepKey}:sent` }],
  };
}

/** A turn whose commit a previous run of the step made: its outcome read back, with no model call. */
function recordedOutcome(agent: SwarmAgent, recorded: { action: unknown }): TurnOutcome {
  return { agent: agent.name, status: agent.status, action: String((recorded.action as { action?: string }).action), modelCalls: 1 };
}

async function failAgent(turn: Turn, error: string): Promise<TurnOutcome> {
  const { deps, task, agent, stepKey } = turn;
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    // Tokens the round set aside for a turn that will not call the model go back.
    await releaseTokens(transaction, swarmCallKey(task, stepKey));
    return { events: await markFailed(transaction, task.id, agent, error, stepKey) };
  });
  return { agent: agent.name, status: 'failed', action: 'failed', modelCalls: 1 };
}

/** An agent that failed (its model, or its time limit): its task goes back to the list for the lead to give out again. */
export async function markFailed(transaction: Db, taskId: string, agent: SwarmAgent, error: string, key: string): Promise<NewTaskEvent[]> {
  await updateAgent(transaction, taskId, agent.name, { status: 'failed', error: error.slice(0, 2000) });
  if (agent.assignment) await updateTask(transaction, taskId, agent.assignment, { status: 'pending', owner: null });
  return [{ type: 'ERROR_OCCURRED', agentId: agent.name, message: `${agent.name} failed: ${error.slice(0, 500)}`, payload: { agent: agent.name }, dedupeKey: `${key}:failed:${agent.name}` }];
}
