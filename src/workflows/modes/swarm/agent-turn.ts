import type { Db } from '../../../db/database.ts';
import type { SwarmAgentStatus } from '../../../db/schema.ts';
import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { ModelTextResult } from '../../../llm/stream-model-text.ts';
import { changeTask } from '../../../task-state/change-task.ts';
import { AGENT_TOOL_LIMITS, atMostOnceRows, callKeyOf, invokedEvent, runCall, toolOf, type CallRecord, type ToolUse } from '../../agent-calls/agent-tool-call.ts';
import { insertToolCallRows } from '../../agent-calls/tool-call-queries.ts';
import type { RequestedToolCall } from '../../../llm/stream-model-text.ts';
import { roleToolSet } from '../../agent-calls/role-tools.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import { endsTheTask } from '../../runtime/control-errors.ts';
import type { AgentAnswer, TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { AgentActionSchema, type AgentAction } from './swarm-answers.ts';
import { askSwarmModel } from './swarm-call.ts';
import { swarmMock, taskListEvent } from './swarm-events.ts';
import { agentPrompt, historyEntry, snippetOf, type AgentView } from './swarm-prompts.ts';
import {
  countSent, insertMessages, insertTurn, insertWorkspaceEntry, LEAD, markRead, readAgents, readInbox, readTasks, readTurn, readTurns,
  readWorkspace, turnStepName, updateAgent, updateTask, type SwarmAgent,
} from './swarm-queries.ts';

/** What a turn leaves for the round: the agent's status after it, and its findings as an answer once it went idle. */
export interface TurnOutcome {
  agent: string;
  status: SwarmAgentStatus;
  action: string;
  /** Model calls the turn made (0 when the agent had no turn to take). */
  modelCalls: number;
  answer?: AgentAnswer;
  error?: string;
}

/** Characters of a tool's output an agent reads back on later turns. */
const TOOL_OUTPUT_CHARS = 3000;

interface Turn {
  deps: Deps;
  task: TaskSnapshot;
  agent: SwarmAgent;
  round: number;
  stepKey: string;
}

/**
 * One agent's turn in a round, as one durable step: one budgeted model call whose answer is the agent's action,
 * committed with its effect (a message, a workspace entry, going idle); a tool call then runs through the agent's
 * role tool set. The turn is keyed by (task, agent, round): a re-run after a crash that finds it recorded replays it
 * without calling the model again. A model that fails fails the agent, not the swarm (spec 4.2 rule 9).
 */
export function takeTurn(deps: Deps, task: TaskSnapshot, name: string, round: number): Promise<TurnOutcome> {
  const stepKey = turnStepName(name, round);
  return runTaskStep(deps, stepKey, () => withCancelWatch(deps, task.id, async (cancel) => {
    const agent = (await readAgents(deps.db, task.id)).find((candidate) => candidate.name === name);
    const recorded = await readTurn(deps.db, task.id, name, round);
    if (agent && recorded) return recordedOutcome(agent, recorded);
    if (!agent || agent.status !== 'active') return { agent: name, status: agent?.status ?? 'shutdown', action: 'none', modelCalls: 0 };
    const turn: Turn = { deps, task, agent, round, stepKey };
    try {
      return await playTurn(turn, cancel);
    } catch (error) {
      if (endsTheTask(error) || deps.handingOver.aborted) throw error;
      return failAgent(turn, error instanceof Error ? error.message : String(error));
    }
  }));
}

async function playTurn(turn: Turn, cancel: AbortSignal): Promise<TurnOutcome> {
  const { deps, task, agent, round, stepKey } = turn;
  const view = await agentView(turn);
  const outcome = await askSwarmModel(deps, task, {
    agentId: agent.name, stepKey, prompt: agentPrompt(view), schema: AgentActionSchema, tier: 'medium',
    mock: swarmMock(task.context, 'swarm-agent', agent.name),
    opening: [{
      type: 'PROGRESS', agentId: agent.name, message: `${agent.name}: turn ${view.turn}`,
      payload: { stage: 'agent_iteration', agent: agent.name, turn: view.turn, round }, dedupeKey: `${stepKey}:progress`,
    }],
    prepare: (answer) => (answer.ok ? runTurnTools(turn, view, answer.value, cancel) : Promise.resolve({})),
    effect: (transaction, answer, result, tools) => applyAction(turn, view, transaction, answer.ok ? answer.value : { action: 'invalid' as never, reasoning: answer.problem }, result, tools),
  }, cancel);
  if ('budgetExhausted' in outcome) throw new Error('the swarm\'s budget is spent');
  return outcome.applied.outcome;
}

/** A tool call the agent asked for and may make, run before the turn's commit, which records it (the tool loop's pieces). */
interface ToolRun {
  record: CallRecord;
  invoked: NewTaskEvent;
}

interface TurnTools {
  /** The tool a `tool_call` action asked for. */
  asked?: ToolRun;
  /** The findings of an agent going idle, written to the session workspace with file_write. */
  findingsFile?: ToolRun;
}

/** The tools a turn runs before its commit: the one the agent asked for, or file_write for the findings it leaves. */
async function runTurnTools(turn: Turn, view: AgentView, action: AgentAction, cancel: AbortSignal): Promise<TurnTools> {
  const findings = findingsOf(view, action);
  if (findings !== undefined) {
    const path = `findings/${turn.agent.name}-${turn.agent.assignment ?? 'findings'}.md`;
    return { findingsFile: await runTool(turn, 'file_write', { path, content: `# ${view.task?.description ?? 'Findings'}\n\n${findings}\n` }, 1, cancel) };
  }
  if (action.action !== 'tool_call' || !action.tool || !view.tools.includes(action.tool)) return {};
  return { asked: await runTool(turn, action.tool, action.args ?? {}, 0, cancel) };
}

/**
 * Runs a tool as one call of the tool loop (the step's call `<stepKey>:c<index>`): a re-run of the step replays its
 * recorded outcome, and a tool acting outside the gateway has its at-most-once claim written first. The agent's
 * request runs through its role's tool set; the findings file through the registry's file_write, which the workflow
 * (not the model) calls. Undefined when the tenant has no such tool here.
 */
async function runTool(turn: Turn, name: string, input: Record<string, unknown>, index: number, cancel: AbortSignal): Promise<ToolRun | undefined> {
  const { deps, task, agent, stepKey } = turn;
  const tools = index === 0 ? roleToolSet(deps.tools, task.tenantId, agent.role) : roleToolSet(deps.tools, task.tenantId, agent.role, [name]);
  const use: ToolUse = {
    agentId: agent.name, role: agent.role, stepKey, tools,
    limits: { ...AGENT_TOOL_LIMITS, toolCalls: 1 }, executed: 0, outputChars: 0, consecutiveErrors: 0, nextIndex: index,
  };
  const tool = toolOf(use, name);
  if (!tool) return undefined;
  const key = callKeyOf(use, index);
  const request = { toolCallId: key, toolName: name, input } as RequestedToolCall;
  await insertToolCallRows(deps.db, await atMostOnceRows(deps, task, use, tool, request, key));
  return { record: await runCall(deps, task, use, request, key, cancel), invoked: invokedEvent(use, request, key) };
}

/** What an agent leaves when this turn ends its work: its key findings, or at its last turn what it has. */
function findingsOf(view: AgentView, action: AgentAction): string | undefined {
  if (action.action === 'idle') return action.key_findings?.trim() || 'No findings.';
  return view.turn >= view.maxTurns ? `Stopped at the limit of ${view.maxTurns} turns. ${lastWords(view, action)}` : undefined;
}

async function agentView(turn: Turn): Promise<AgentView> {
  const { deps, task, agent, round } = turn;
  const limits = deps.config.swarm;
  const [agents, tasks, turns, inbox, workspace, sent] = await Promise.all([
    readAgents(deps.db, task.id), readTasks(deps.db, task.id), readTurns(deps.db, task.id, agent.name),
    readInbox(deps.db, task.id, agent.name, round), readWorkspace(deps.db, task.id, limits.workspaceMaxEntries), countSent(deps.db, task.id, agent.name),
  ]);
  const assigned = tasks.find((candidate) => candidate.id === agent.assignment);
  return {
    query: task.query, name: agent.name, role: agent.role, round, turn: agent.turns + 1, maxTurns: maxTurnsOf(task, limits.maxIterationsPerAgent),
    task: assigned ? { id: assigned.id, description: assigned.description } : null,
    teammates: agents.filter((other) => other.name !== agent.name && other.status !== 'failed' && other.status !== 'shutdown')
      .map((other) => ({ name: other.name, role: other.role, assignment: other.assignment })),
    tools: roleToolSet(deps.tools, task.tenantId, agent.role).offered.map((tool) => tool.name),
    history: turns.map((recorded) => historyEntry(recorded, TOOL_OUTPUT_CHARS)),
    inbox: inbox.map((message) => ({ id: message.id, sender: message.sender, body: message.body })),
    workspace: workspace.map((entry) => snippetOf(entry, limits.workspaceSnippetChars)),
    messagesLeft: Math.max(0, limits.maxMessagesPerAgent - sent),
  };
}

/** The top-level `max_iterations` lowers an agent's turns below the deployment's limit, never above it. */
function maxTurnsOf(task: TaskSnapshot, limit: number): number {
  const asked = task.options.max_iterations;
  return typeof asked === 'number' ? Math.min(asked, limit) : limit;
}

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
    return { events, result: { outcome: { agent: agent.name, status: 'idle', action: action.action, modelCalls: 1, answer: { ...result, text: findings, agentId: agent.name } } } };
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

/** What an agent stopped at the turn limit leaves: what it published, sent or last said. */
function lastWords(view: AgentView, action: AgentAction): string {
  return (action.data ?? action.message ?? action.key_findings ?? view.history.at(-1)?.result ?? '').slice(0, 2000);
}

/** A turn whose commit a previous run of the step made: its outcome read back, with no model call. */
function recordedOutcome(now: SwarmAgent, recorded: { action: unknown; answered_by: unknown }): TurnOutcome {
  const agent = now;
  const action = String((recorded.action as { action?: string }).action);
  const answer = now.status === 'idle' && now.findings !== null
    ? { ...(recorded.answered_by as Omit<ModelTextResult, 'text'>), text: now.findings, agentId: agent.name }
    : undefined;
  return { agent: agent.name, status: now.status, action, modelCalls: 1, ...(answer ? { answer } : {}) };
}

async function failAgent(turn: Turn, error: string): Promise<TurnOutcome> {
  const { deps, task, agent, stepKey } = turn;
  await changeTask(deps, task.id, 'workflow', async (transaction) => ({ events: await markFailed(transaction, task.id, agent, error, stepKey) }));
  return { agent: agent.name, status: 'failed', action: 'failed', modelCalls: 1, error };
}

/** An agent that failed (its model, or its time limit): its task goes back to the list for the lead to give out again. */
export async function markFailed(transaction: Db, taskId: string, agent: SwarmAgent, error: string, key: string): Promise<NewTaskEvent[]> {
  await updateAgent(transaction, taskId, agent.name, { status: 'failed', error: error.slice(0, 2000) });
  if (agent.assignment) await updateTask(transaction, taskId, agent.assignment, { status: 'pending', owner: null });
  return [{ type: 'ERROR_OCCURRED', agentId: agent.name, message: `${agent.name} failed: ${error.slice(0, 500)}`, payload: { agent: agent.name }, dedupeKey: `${key}:failed:${agent.name}` }];
}
