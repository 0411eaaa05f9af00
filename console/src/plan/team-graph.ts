import type { TaskEvent } from '../api/task-event.ts';
import { nextStatus, type GraphEdge, type GraphNode, type PlanGraph } from './graph.ts';

interface PlannedSubtask { id: string; name: string }

const SUPERVISOR = 'supervisor';
const SYNTHESIS = 'synthesis';

/**
 * A standard (DAG) or supervisor plan: the subtasks the orchestrator announced (the last PROGRESS at stage
 * `planned`, so a plan an approver edited replaces the first), their dependencies, each subtask's status from its
 * agent's events; the supervisor over the first subtasks when a team was recruited; the synthesis after the last
 * ones once it starts.
 */
export function teamGraph(events: TaskEvent[]): PlanGraph | undefined {
  const planned = events.findLast((event) => event.type === 'PROGRESS' && event.payload?.stage === 'planned');
  if (!planned) return undefined;
  const subtasks = (planned.payload?.plan ?? []) as PlannedSubtask[];
  if (subtasks.length === 0) return undefined;
  const nodes: GraphNode[] = subtasks.map((subtask) => ({ id: subtask.id, agent: subtask.id, label: subtask.name || subtask.id, status: 'planned' }));
  const edges: GraphEdge[] = [...((planned.payload?.deps ?? []) as GraphEdge[])];
  const supervised = events.some((event) => event.type === 'TEAM_RECRUITED');
  if (supervised) {
    const firsts = nodes.filter((node) => !edges.some((edge) => edge.to === node.id));
    nodes.unshift({ id: SUPERVISOR, agent: SUPERVISOR, label: 'Supervisor', status: 'planned', detail: 'delegates each step' });
    edges.push(...firsts.map((node) => ({ from: SUPERVISOR, to: node.id })));
  }
  if (events.some((event) => event.agent_id === SYNTHESIS)) {
    const lasts = nodes.filter((node) => node.id !== SUPERVISOR && !edges.some((edge) => edge.from === node.id));
    nodes.push({ id: SYNTHESIS, agent: SYNTHESIS, label: 'Synthesis', status: 'planned', detail: 'combines the results' });
    edges.push(...lasts.map((node) => ({ from: node.id, to: SYNTHESIS })));
  }
  const byId = new Map(nodes.map((node) => [node.id, node]));
  for (const event of events) {
    if (event.seq < planned.seq) continue;
    const node = event.agent_id ? byId.get(event.agent_id) : undefined;
    if (!node) continue;
    node.status = node.id === SUPERVISOR ? supervisorStatus(node.status, event.type) : nextStatus(node.status, event.type);
  }
  return { kind: supervised ? 'supervisor' : 'dag', nodes, edges };
}

/** The supervisor works from recruiting its team until it retires it. */
function supervisorStatus(current: GraphNode['status'], type: string): GraphNode['status'] {
  if (type === 'TEAM_RETIRED') return 'done';
  if (type === 'ERROR_OCCURRED') return 'failed';
  return current === 'planned' ? 'running' : current;
}
