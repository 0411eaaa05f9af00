import { useMemo } from 'preact/hooks';
import type { TaskEvent } from '../api/event-stream';
import type { GraphNode, PlanGraph, TaskFacts } from '../plan/graph';
import { layoutGraph, NODE_HEIGHT, NODE_WIDTH, type PlacedNode } from '../plan/layout';
import { planGraphOf } from '../plan/plan-graph';

const TITLES: Record<PlanGraph['kind'], string> = { dag: 'Plan', supervisor: 'Plan (supervisor)', research: 'Research phases', swarm: 'Swarm' };
/** Characters of a label that fit a node's line at the node's font size. */
const LABEL_CHARS = 22;
/** A graph up to this wide (two nodes a layer) shrinks to a phone's width; a wider one scrolls at full size. */
const FITS_WHEN_NARROWER = 420;

interface PlanViewProps {
  events: TaskEvent[];
  task: TaskFacts;
  selected: string | null;
  onSelect(agent: string): void;
}

/**
 * The plan drawn as a graph of its agents (layered by dependency, live status by colour and word), with the same
 * content as a list: the list is what a keyboard and a screen reader use, the drawing is for the eye and the mouse.
 */
export function PlanView({ events, task, selected, onSelect }: PlanViewProps) {
  const graph = useMemo(() => planGraphOf(events, task), [events, task.status, task.context]);
  const layout = useMemo(() => graph && layoutGraph(graph), [graph]);
  if (!graph || !layout || graph.nodes.length === 0) return null;
  const counts = countStatuses(graph.nodes);
  return (
    <section class="card" aria-labelledby="plan-title">
      <h2 id="plan-title">{TITLES[graph.kind]} <span class="muted">({graph.nodes.length} {graph.kind === 'swarm' ? 'agents and tasks' : 'agents'}: {counts})</span></h2>
      {/* Focusable, so a keyboard can scroll a graph wider than the screen. */}
      <div class="graph-scroll" tabIndex={0} role="group" aria-label="Plan graph">
        <svg class={`plan-graph${layout.width <= FITS_WHEN_NARROWER ? ' fit' : ''}`} width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} role="img"
          aria-label={`${TITLES[graph.kind]} drawn as a graph: ${counts}. The list below has the same agents.`} data-graph-kind={graph.kind}>
          <defs>
            {/* Text a little too wide for its box is cut at the box's edge rather than drawn over the next node. */}
            <clipPath id="plan-node-clip"><rect width={NODE_WIDTH - 6} height={NODE_HEIGHT} /></clipPath>
            <marker id="plan-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
              <path d="M0,0 L8,4 L0,8 z" class="arrow" />
            </marker>
          </defs>
          {layout.edges.map((edge) => <path key={`${edge.from}>${edge.to}`} d={edge.path} class="edge" marker-end="url(#plan-arrow)" />)}
          {layout.nodes.map((node) => <DrawnNode key={node.id} node={node} selected={selected === node.agent} onSelect={onSelect} />)}
        </svg>
      </div>
      <ol class="plan">
        {graph.nodes.map((node) => {
          const after = graph.edges.filter((edge) => edge.to === node.id).map((edge) => labelOf(graph, edge.from));
          return (
            <li key={node.id} data-plan-node={node.id} data-status={node.status}>
              <span class={`badge ${node.status === 'done' ? 'completed' : node.status}`}>{node.status}</span>{' '}
              <button type="button" class="link" aria-pressed={selected === node.agent} onClick={() => onSelect(node.agent)}>{node.label}</button>
              {node.detail && <span class="muted"> · {node.detail}</span>}
              {after.length > 0 && <span class="muted"> · after {after.join(', ')}</span>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function DrawnNode({ node, selected, onSelect }: { node: PlacedNode; selected: boolean; onSelect(agent: string): void }) {
  return (
    <g class={`node ${node.status}${selected ? ' selected' : ''}`} transform={`translate(${node.x},${node.y})`} data-graph-node={node.id} data-status={node.status}
      onClick={() => onSelect(node.agent)}>
      <title>{`${node.label} (${node.status})`}</title>
      <rect width={NODE_WIDTH} height={NODE_HEIGHT} rx="8" />
      <text x="10" y="21" class="node-label" clip-path="url(#plan-node-clip)">{clip(node.label, LABEL_CHARS)}</text>
      <text x="10" y="41" class="node-status" clip-path="url(#plan-node-clip)">{node.status}{node.detail ? ` · ${clip(node.detail, LABEL_CHARS - node.status.length - 3)}` : ''}</text>
    </g>
  );
}

function countStatuses(nodes: GraphNode[]): string {
  const counts = new Map<string, number>();
  for (const node of nodes) counts.set(node.status, (counts.get(node.status) ?? 0) + 1);
  return [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
}

const labelOf = (graph: PlanGraph, id: string) => {
  const node = graph.nodes.find((candidate) => candidate.id === id);
  return node ? clip(node.label, 40) : id;
};
const clip = (text: string, chars: number) => (text.length <= chars ? text : `${text.slice(0, Math.max(1, chars - 1))}…`);
