import type { Deps } from '../../../deps.ts';
import { roleToolSet } from '../../agent-calls/role-tools.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { historyEntry, snippetOf, type AgentView } from './swarm-prompts.ts';
import { countSent, readInbox, readTasks, readTurns, readWorkspace, type SwarmAgent } from './swarm-queries.ts';

/** Characters of a tool's output an agent reads back on later turns. */
const TOOL_OUTPUT_CHARS = 3000;

/** One agent's turn: whose, in which round, under which step. */
export interface Turn {
  deps: Deps;
  task: TaskSnapshot;
  agent: SwarmAgent;
  /** The whole team as the turn began. */
  team: SwarmAgent[];
  round: number;
  stepKey: string;
}

/** What the agent sees on its turn (swarm-prompts.ts): its task, team, history, mailbox and the workspace. */
export async function agentView(turn: Turn): Promise<AgentView> {
  const { deps, task, agent, team, round } = turn;
  const limits = deps.config.swarm;
  const [tasks, turns, inbox, workspace, sent] = await Promise.all([
    readTasks(deps.db, task.id), readTurns(deps.db, task.id, agent.name),
    readInbox(deps.db, task.id, agent.name, round), readWorkspace(deps.db, task.id, limits.workspaceMaxEntries, round), countSent(deps.db, task.id, agent.name),
  ]);
  const assigned = tasks.find((candidate) => candidate.id === agent.assignment);
  return {
    query: task.query, name: agent.name, role: agent.role, round, turn: agent.turns + 1, maxTurns: maxTurnsOf(task, limits.maxIterationsPerAgent),
    task: assigned ? { id: assigned.id, description: assigned.description } : null,
    teammates: team.filter((other) => other.name !== agent.name && other.status !== 'failed' && other.status !== 'shutdown')
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

