import type { TaskEvent } from '../api/task-event.ts';
import type { PlanGraph, TaskFacts } from './graph.ts';
import { researchGraph } from './research-graph.ts';
import { swarmGraph } from './swarm-graph.ts';
import { teamGraph } from './team-graph.ts';

/** The graph of whichever workflow runs the task, or undefined while (or when) it has none to show. */
export function planGraphOf(events: TaskEvent[], task: TaskFacts): PlanGraph | undefined {
  // A swarm that fell back to standard routing (spec 4.2 rule 8) has no lead: its plan is a team's.
  const graph = swarmGraph(events, task.status) ?? (isResearch(events, task) ? researchGraph(events) : teamGraph(events));
  if (graph) settle(graph, task.status);
  return graph;
}

/** A finished task leaves nothing running: a completed one's phases are done, a failed one's were cut short. */
function settle(graph: PlanGraph, status: string): void {
  const ended = status === 'completed' ? 'done' : status === 'failed' || status === 'timeout' ? 'failed' : undefined;
  if (!ended) return;
  for (const node of graph.nodes) if (node.status === 'running') node.status = ended;
}

function isResearch(events: TaskEvent[], task: TaskFacts): boolean {
  return task.context.force_research === true || events.some((event) => event.agent_id === 'research-refiner' || event.type === 'RESEARCH_PLAN_READY');
}
