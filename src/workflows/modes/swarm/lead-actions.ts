import type { Db } from '../../../db/database.ts';
import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { timePausedMs, type TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { modelTiers } from '../../../llm/model-catalog-schema.ts';
import type { LeadAction } from './swarm-answers.ts';
import { LEAD_AGENT_ID, taskListEvent } from './swarm-events.ts';
import { insertAgent, insertMessages, LEAD, readAgents, readTasks, updateAgent, updateTask, upsertTask, type SwarmAgent, type SwarmTask } from './swarm-queries.ts';
import { DEFAULT_SWARM_ROLE, isSwarmRole, SWARM_ROLES } from './swarm-roles.ts';

const AGENT_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

interface Board {
  deps: Deps;
  task: TaskSnapshot;
  transaction: Db;
  round: number;
  agents: SwarmAgent[];
  tasks: SwarmTask[];
  events: NewTaskEvent[];
  refused: string[];
  taskListChanged: boolean;
  teamChanged: boolean;
  messages: number;
}

/**
 * The lead's actions applied to the task list, the team and the mailboxes, inside the decision's commit. An action
 * the swarm cannot take (an unknown agent, a role outside SWARM_ROLES, an agent past max_agents) changes nothing and
 * is reported in `refused`, which the lead reads back and LEAD_DECISION carries.
 */
export async function applyLeadActions(deps: Deps, task: TaskSnapshot, transaction: Db, round: number, actions: LeadAction[]): Promise<{ events: NewTaskEvent[]; refused: string[] }> {
  const board: Board = {
    deps, task, transaction, round, events: [], refused: [], taskListChanged: false, teamChanged: false, messages: 0,
    agents: await readAgents(transaction, task.id), tasks: await readTasks(transaction, task.id),
  };
  for (const action of actions) await applyAction(board, action);
  const agents = await readAgents(transaction, task.id);
  if (board.teamChanged) {
    board.events.push({
      type: 'TEAM_STATUS', agentId: LEAD_AGENT_ID, message: `Team: ${agents.filter((agent) => agent.status === 'active').length} active of ${agents.length}`,
      payload: { agents: agents.map(({ name, role, status, assignment }) => ({ name, role, status, task_id: assignment })) },
    });
  }
  if (board.taskListChanged) board.events.push(taskListEvent(await readTasks(transaction, task.id), `swarm:lead:${round}`));
  return { events: board.events, refused: board.refused };
}

async function applyAction(board: Board, action: LeadAction): Promise<void> {
  switch (action.type) {
    case 'revise_plan': return revisePlan(board, action);
    case 'spawn_agent': return spawnAgent(board, action);
    case 'assign_task': return assignTask(board, action.name ?? '', action.task_id ?? '');
    case 'send_message': return sendMessages(board, [action.to ?? action.name ?? ''], action.message ?? '');
    case 'broadcast': return sendMessages(board, board.agents.filter((agent) => agent.status === 'active' || agent.status === 'idle').map((agent) => agent.name), action.message ?? '');
    case 'shutdown_agent': return shutdownAgent(board, action.name ?? '');
    case 'interim_reply': return interimReply(board, action.message ?? '');
    case 'file_read': return refuse(board, `file_read ${(action.paths ?? []).join(', ')}: no reads are left for this decision`);
    default: return undefined;
  }
}

async function revisePlan(board: Board, action: LeadAction): Promise<void> {
  const { transaction, task } = board;
  for (const planned of action.tasks ?? []) {
    await upsertTask(transaction, task.id, { id: planned.id, description: planned.description, depends_on: planned.depends_on ?? [] }, LEAD);
  }
  for (const id of action.cancel ?? []) {
    if (board.tasks.some((existing) => existing.id === id && existing.status !== 'completed')) await updateTask(transaction, task.id, id, { status: 'cancelled' });
  }
  board.tasks = await readTasks(transaction, task.id);
  board.taskListChanged = true;
}

async function spawnAgent(board: Board, action: LeadAction): Promise<void> {
  const { deps, task, transaction, round } = board;
  const name = action.name?.trim() ?? '';
  const role = action.role?.trim() || DEFAULT_SWARM_ROLE;
  const limit = deps.config.swarm.maxAgents;
  if (!AGENT_NAME.test(name) || name === LEAD) return refuse(board, `spawn_agent ${name || '(no name)'}: a name is lowercase letters, digits, - or _, and not "lead"`);
  if (board.agents.some((agent) => agent.name === name)) return refuse(board, `spawn_agent ${name}: there is already an agent of that name`);
  if (!isSwarmRole(role)) return refuse(board, `spawn_agent ${name}: role ${role} is not available to swarm agents (${SWARM_ROLES.join(', ')})`);
  if (board.agents.length >= limit) return refuse(board, `spawn_agent ${name}: the swarm has reached max_agents (${limit})`);
  const modelTier = action.model_tier?.trim() || null;
  if (modelTier !== null && !modelTiers.some((tier) => tier === modelTier)) return refuse(board, `spawn_agent ${name}: model_tier ${modelTier} is not one of ${modelTiers.join(', ')}`);
  const assignment = action.task_id && assignable(board, action.task_id) ? action.task_id : null;
  await insertAgent(transaction, task.id, { name, role, assignment, modelTier, pausedMs: timePausedMs(task) }, round);
  if (assignment) await claimTask(board, assignment, name);
  board.agents = await readAgents(transaction, task.id);
  board.teamChanged = true;
  board.events.push({
    type: 'AGENT_STARTED', agentId: name, message: `${name} (${role}) joins the team${assignment ? ` for ${assignment}` : ''}`,
    payload: { role, task_id: assignment, ...(modelTier ? { model_tier: modelTier } : {}) },
  });
}

async function assignTask(board: Board, name: string, taskId: string): Promise<void> {
  const agent = board.agents.find((candidate) => candidate.name === name);
  if (!agent || agent.status === 'failed' || agent.status === 'shutdown') return refuse(board, `assign_task: ${name || '(no name)'} is not an agent that can work`);
  if (!assignable(board, taskId)) return refuse(board, `assign_task ${taskId}: no such task left to do`);
  await updateAgent(board.transaction, board.task.id, name, { status: 'active', assignment: taskId, findings: null });
  await claimTask(board, taskId, name);
  board.agents = await readAgents(board.transaction, board.task.id);
  if (agent.status !== 'active') board.teamChanged = true;
  board.events.push({ type: 'DELEGATION', agentId: LEAD_AGENT_ID, message: `${taskId} assigned to ${name}`, payload: { task_id: taskId, agent: name } });
}

const assignable = (board: Board, taskId: string) => board.tasks.some((task) => task.id === taskId && (task.status === 'pending' || task.status === 'in_progress'));

async function claimTask(board: Board, taskId: string, owner: string): Promise<void> {
  await updateTask(board.transaction, board.task.id, taskId, { status: 'in_progress', owner });
  board.tasks = await readTasks(board.transaction, board.task.id);
  board.taskListChanged = true;
}

async function sendMessages(board: Board, recipients: string[], body: string): Promise<void> {
  const known = recipients.filter((name) => board.agents.some((agent) => agent.name === name));
  if (known.length === 0 || body.trim() === '') return refuse(board, `send_message to ${recipients.join(', ') || '(nobody)'}: no such agent, or no message`);
  const id = `${LEAD}:${board.round}:${board.messages++}`;
  await insertMessages(board.transaction, board.task.id, known.map((recipient) => ({ id: `${id}#${recipient}`, sender: LEAD, recipient, body, sentRound: board.round })));
  board.events.push({ type: 'MESSAGE_SENT', agentId: LEAD_AGENT_ID, message: body.slice(0, 2000), payload: { from: LEAD, to: known } });
}

async function shutdownAgent(board: Board, name: string): Promise<void> {
  const agent = board.agents.find((candidate) => candidate.name === name);
  if (!agent || agent.status === 'shutdown') return refuse(board, `shutdown_agent: ${name || '(no name)'} is not on the team`);
  await updateAgent(board.transaction, board.task.id, name, { status: 'shutdown' });
  const unfinished = board.tasks.find((task) => task.id === agent.assignment && task.status === 'in_progress');
  if (unfinished) await updateTask(board.transaction, board.task.id, unfinished.id, { status: 'pending', owner: null });
  board.agents = await readAgents(board.transaction, board.task.id);
  board.tasks = await readTasks(board.transaction, board.task.id);
  board.teamChanged = true;
  board.events.push({ type: 'AGENT_COMPLETED', agentId: name, message: `${name} was shut down by the lead`, payload: { shutdown: true } });
}

/** A reply to the user while the team works (reference §1.10): an LLM_OUTPUT of the lead, not the task's answer. */
function interimReply(board: Board, text: string): void {
  if (text.trim() === '') return refuse(board, 'interim_reply: no message');
  board.events.push({ type: 'LLM_OUTPUT', agentId: LEAD_AGENT_ID, message: text.trim().slice(0, 8000), payload: { interim: true, round: board.round } });
}

function refuse(board: Board, reason: string): void {
  board.refused.push(reason);
}
