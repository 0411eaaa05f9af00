import type { TaskEvent } from '../api/task-event.ts';
import type { GraphEdge, GraphNode, NodeStatus, PlanGraph } from './graph.ts';

/** The lead's agent id (src/workflows/modes/swarm/swarm-events.ts). */
export const SWARM_LEAD = 'swarm-lead';

interface SwarmTask { id: string; description: string; status: string; owner: string | null; depends_on: string[] }
interface TeamMember { name: string; role?: string; status?: string }

const TASK_STATUS: Record<string, NodeStatus> = { pending: 'planned', in_progress: 'running', completed: 'done', cancelled: 'failed' };
const AGENT_STATUS: Record<string, NodeStatus> = { active: 'running', idle: 'done', failed: 'failed', shutdown: 'done' };
/** An agent's events that mean it is at work again after going idle. */
const AT_WORK = new Set(['AGENT_STARTED', 'AGENT_THINKING', 'TOOL_INVOKED', 'PROGRESS', 'DELEGATION']);

/**
 * A swarm: the lead, the agents it spawned (AGENT_STARTED, TEAM_STATUS) with the status of their latest turn, and
 * the shared task list (the last TASKLIST_UPDATED): each task under the agent that owns it (under the lead while
 * unowned) and after the tasks it depends on.
 */
export function swarmGraph(events: TaskEvent[], taskStatus: string): PlanGraph | undefined {
  if (!events.some((event) => event.agent_id === SWARM_LEAD)) return undefined;
  const lead: GraphNode = { id: SWARM_LEAD, agent: SWARM_LEAD, label: 'Lead', status: 'running', detail: 'plans and assigns' };
  const agents = new Map<string, GraphNode>();
  let tasks: SwarmTask[] = [];
  for (const event of events) {
    if (event.type === 'TASKLIST_UPDATED') tasks = (event.payload?.tasks ?? []) as SwarmTask[];
    if (event.type === 'TEAM_STATUS' && Array.isArray(event.payload?.agents)) {
      for (const member of event.payload.agents as TeamMember[]) {
        const node = agentNode(agents, member.name, member.role);
        node.status = AGENT_STATUS[member.status ?? ''] ?? node.status;
      }
    }
    const name = event.agent_id;
    if (!name || name === SWARM_LEAD || name === 'user' || name === 'final_output' || name === 'orchestrator') continue;
    if (event.type === 'AGENT_STARTED') agentNode(agents, name, event.payload?.role as string | undefined);
    const node = agents.get(name);
    if (!node) continue;
    if (event.type === 'AGENT_COMPLETED') node.status = 'done';
    else if (event.type === 'ERROR_OCCURRED') node.status = 'failed';
    else if (AT_WORK.has(event.type)) node.status = 'running';
  }
  if (taskStatus === 'completed') lead.status = 'done';
  else if (taskStatus === 'failed' || taskStatus === 'timeout') lead.status = 'failed';
  const nodes: GraphNode[] = [lead, ...agents.values()];
  const edges: GraphEdge[] = [...agents.keys()].map((name) => ({ from: SWARM_LEAD, to: name }));
  for (const task of tasks) {
    const id = `task:${task.id}`;
    nodes.push({ id, agent: task.owner ?? SWARM_LEAD, label: task.description, status: TASK_STATUS[task.status] ?? 'planned', detail: `${task.id}${task.owner ? ` · ${task.owner}` : ''}` });
    edges.push({ from: task.owner && agents.has(task.owner) ? task.owner : SWARM_LEAD, to: id });
    for (const dependency of task.depends_on ?? []) edges.push({ from: `task:${dependency}`, to: id });
  }
  return { kind: 'swarm', nodes, edges: edges.filter((edge) => nodes.some((node) => node.id === edge.from)) };
}

function agentNode(agents: Map<string, GraphNode>, name: string, role: string | undefined): GraphNode {
  let node = agents.get(name);
  if (!node) {
    node = { id: name, agent: name, label: name, status: 'running', detail: role };
    agents.set(name, node);
  }
  if (role) node.detail = role;
  return node;
}
