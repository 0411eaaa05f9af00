import type { TaskEvent } from '../api/task-event.ts';

export type NodeStatus = 'planned' | 'running' | 'done' | 'failed';
export type GraphKind = 'dag' | 'supervisor' | 'research' | 'swarm';

export interface GraphNode {
  /** Unique in the graph (an agent that runs twice, as research's writer does, is two nodes). */
  id: string;
  label: string;
  /** The agent whose events the node's panel shows. */
  agent: string;
  status: NodeStatus;
  /** A note under the label: a role, a task's owner. */
  detail?: string;
}

export interface GraphEdge { from: string; to: string }

export interface PlanGraph {
  kind: GraphKind;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** What the task page knows besides its events: the workflow's kind and whether it has finished. */
export interface TaskFacts {
  context: Record<string, unknown>;
  /** The task's short status (completed, failed, running, …). */
  status: string;
}

/** An agent's status after one more of its events: started work runs, AGENT_COMPLETED is done, an error fails it. */
export function nextStatus(current: NodeStatus, type: string): NodeStatus {
  if (type === 'AGENT_COMPLETED') return 'done';
  if (type === 'ERROR_OCCURRED') return current === 'done' ? current : 'failed';
  if (current === 'planned') return 'running';
  return current;
}

/** The events of each agent, in order, without the answer's token deltas. */
export function eventsByAgent(events: TaskEvent[]): Map<string, TaskEvent[]> {
  const groups = new Map<string, TaskEvent[]>();
  for (const event of events) {
    if (event.type === 'LLM_PARTIAL') continue;
    const agent = event.agent_id ?? 'task';
    const group = groups.get(agent);
    if (group) group.push(event);
    else groups.set(agent, [event]);
  }
  return groups;
}
