import type { TaskEvent } from '../api/task-event.ts';
import type { GraphEdge, GraphNode, NodeStatus, PlanGraph } from './graph.ts';

/** What each of the research workflow's phase agents does (src/workflows/modes/research). */
const PHASES: Record<string, string> = {
  'research-planner': 'Plan review',
  'research-refiner': 'Refine the question',
  'research-synthesis': 'Write the report',
  'coverage-evaluator': 'Check coverage',
  'subquery-generator': 'Plan gap searches',
  'claim-extractor': 'Find the claims',
  'claim-verifier': 'Verify the claims',
  'fact-extractor': 'Extract the facts',
};
/** Events of the task as a whole, not of one phase. */
const NOT_A_PHASE = new Set(['orchestrator', 'final_output', 'task', 'user']);

interface Stage { group: string; nodes: GraphNode[] }

/**
 * The research workflow as it runs: its phases in the order they start, the research agents of one round side by
 * side (announced as planned when the question is split, `gapN-…` agents of a coverage round likewise grouped), each
 * stage after the one before. A phase that runs again (the writer after a gap round) is a node of its own.
 */
export function researchGraph(events: TaskEvent[]): PlanGraph | undefined {
  const stages: Stage[] = [];
  const current = new Map<string, GraphNode>();
  const place = (node: GraphNode, group: string) => {
    const last = stages.at(-1);
    if (last && last.group === group) last.nodes.push(node);
    else {
      for (const earlier of last?.nodes ?? []) if (earlier.status === 'running') earlier.status = 'done';
      stages.push({ group, nodes: [node] });
    }
    current.set(node.agent, node);
  };
  for (const event of events) {
    if (event.type === 'PROGRESS' && event.payload?.stage === 'decomposition' && Array.isArray(event.payload.subtasks)) {
      for (const subtask of event.payload.subtasks as Array<{ id: string; description: string }>) {
        place({ id: subtask.id, agent: subtask.id, label: subtask.description, status: 'planned' }, groupOf(subtask.id));
      }
      continue;
    }
    const agent = event.agent_id;
    if (!agent || NOT_A_PHASE.has(agent) || event.type === 'LLM_PARTIAL') continue;
    let node = current.get(agent);
    const finishedEarlier = node && node.status !== 'planned' && node.status !== 'running' && !stages.at(-1)!.nodes.includes(node);
    if (!node || finishedEarlier) {
      const runs = stages.flatMap((stage) => stage.nodes).filter((candidate) => candidate.agent === agent).length;
      node = { id: runs === 0 ? agent : `${agent}#${runs + 1}`, agent, label: PHASES[agent] ?? agent, status: 'planned', detail: runs === 0 ? undefined : `run ${runs + 1}` };
      place(node, groupOf(agent));
    }
    node.status = phaseStatus(node.status, event.type);
  }
  if (stages.length === 0) return undefined;
  const edges: GraphEdge[] = [];
  for (let index = 1; index < stages.length; index++) {
    for (const from of stages[index - 1].nodes) for (const to of stages[index].nodes) edges.push({ from: from.id, to: to.id });
  }
  return { kind: 'research', nodes: stages.flatMap((stage) => stage.nodes), edges };
}

/** Research agents of one round run side by side: `research-2` with `research-1`, `gap1-research-3` with `gap1-…`. */
function groupOf(agent: string): string {
  if (/^research-\d+$/.test(agent)) return 'agents';
  const gap = /^(gap\d+)-/.exec(agent);
  return gap ? gap[1] : agent;
}

function phaseStatus(current: NodeStatus, type: string): NodeStatus {
  if (type === 'AGENT_COMPLETED' || type === 'RESEARCH_PLAN_APPROVED') return 'done';
  if (type === 'ERROR_OCCURRED') return current === 'done' ? current : 'failed';
  return current === 'planned' ? 'running' : current;
}
