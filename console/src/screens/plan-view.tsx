import { useMemo } from 'preact/hooks';
import type { TaskEvent } from '../api/event-stream';

interface PlanNode { id: string; name: string }
interface PlanEdge { from: string; to: string }
type NodeStatus = 'planned' | 'running' | 'done' | 'failed';

/**
 * The plan as the orchestrator announced it (the PROGRESS event at stage `planned`): each subtask with what it
 * waits for, and its live status from its agent's own events.
 */
export function PlanView({ events }: { events: TaskEvent[] }) {
  const plan = useMemo(() => {
    const planned = events.findLast((event) => event.type === 'PROGRESS' && event.payload?.stage === 'planned');
    if (!planned) return undefined;
    const nodes = (planned.payload?.plan ?? []) as PlanNode[];
    const edges = (planned.payload?.deps ?? []) as PlanEdge[];
    const status = new Map<string, NodeStatus>(nodes.map((node) => [node.id, 'planned']));
    for (const event of events) {
      if (!event.agent_id || !status.has(event.agent_id)) continue;
      status.set(event.agent_id, nextStatus(status.get(event.agent_id)!, event.type));
    }
    return { nodes, edges, status, strategy: String(planned.payload?.execution_strategy ?? '') };
  }, [events]);
  if (!plan || plan.nodes.length === 0) return null;
  return (
    <section class="card" aria-labelledby="plan-title">
      <h2 id="plan-title">Plan <span class="muted">({plan.nodes.length} subtasks{plan.strategy && `, ${plan.strategy}`})</span></h2>
      <ol class="plan">
        {plan.nodes.map((node) => {
          const after = plan.edges.filter((edge) => edge.to === node.id).map((edge) => edge.from);
          const status = plan.status.get(node.id)!;
          return (
            <li key={node.id} data-plan-node={node.id} data-status={status}>
              <span class={`badge ${status === 'done' ? 'completed' : status}`}>{status}</span> <strong>{node.id}</strong> {node.name}
              {after.length > 0 && <span class="muted"> · after {after.join(', ')}</span>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function nextStatus(current: NodeStatus, type: string): NodeStatus {
  if (type === 'AGENT_COMPLETED') return 'done';
  if (type === 'ERROR_OCCURRED') return current === 'done' ? current : 'failed';
  if (current === 'planned') return 'running';
  return current;
}
