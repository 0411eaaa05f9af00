import type { GraphEdge, GraphNode, PlanGraph } from './graph.ts';

export const NODE_WIDTH = 176;
export const NODE_HEIGHT = 54;
const GAP_X = 20;
const GAP_Y = 40;
const MARGIN = 8;

export interface PlacedNode extends GraphNode { x: number; y: number; layer: number }
export interface PlacedEdge extends GraphEdge { path: string }
export interface Layout { width: number; height: number; nodes: PlacedNode[]; edges: PlacedEdge[] }

/**
 * Layers from the top by dependency depth (a node sits one layer below the deepest node it depends on), each
 * layer's nodes ordered by where their parents sit (fewer crossings) and centred. Top to bottom, so a phone
 * scrolls down the plan rather than across it; a layer wider than the screen scrolls sideways.
 */
export function layoutGraph(graph: PlanGraph): Layout {
  const depth = depthOf(graph);
  const byDepth: GraphNode[][] = [];
  for (const node of graph.nodes) (byDepth[depth.get(node.id)!] ??= []).push(node);
  // A cycle can leave depths unused: the layers are the depths that have nodes.
  const layers = byDepth.filter((layer) => layer !== undefined);
  const position = new Map<string, number>();
  for (const layer of layers) {
    const meanParent = (node: GraphNode) => {
      const parents = graph.edges.filter((edge) => edge.to === node.id && position.has(edge.from)).map((edge) => position.get(edge.from)!);
      return parents.length === 0 ? Number.POSITIVE_INFINITY : parents.reduce((sum, value) => sum + value, 0) / parents.length;
    };
    const order = layer.map((node, index) => ({ node, index, key: meanParent(node) }))
      .sort((a, b) => (a.key === b.key ? a.index - b.index : a.key - b.key));
    order.forEach(({ node }, index) => position.set(node.id, index));
    layer.splice(0, layer.length, ...order.map(({ node }) => node));
  }
  const widest = Math.max(...layers.map((layer) => layer.length));
  const width = MARGIN * 2 + widest * NODE_WIDTH + (widest - 1) * GAP_X;
  const placed = new Map<string, PlacedNode>();
  layers.forEach((layer, layerIndex) => {
    const rowWidth = layer.length * NODE_WIDTH + (layer.length - 1) * GAP_X;
    const left = (width - rowWidth) / 2;
    layer.forEach((node, index) => placed.set(node.id, {
      ...node, layer: layerIndex, x: left + index * (NODE_WIDTH + GAP_X), y: MARGIN + layerIndex * (NODE_HEIGHT + GAP_Y),
    }));
  });
  const edges = graph.edges.flatMap((edge) => {
    const from = placed.get(edge.from);
    const to = placed.get(edge.to);
    return from && to ? [{ ...edge, path: edgePath(from, to) }] : [];
  });
  return { width, height: MARGIN * 2 + layers.length * NODE_HEIGHT + (layers.length - 1) * GAP_Y, nodes: graph.nodes.map((node) => placed.get(node.id)!), edges };
}

/** Longest path from a node without dependencies; an edge that would close a cycle is not followed. */
function depthOf(graph: PlanGraph): Map<string, number> {
  const depth = new Map(graph.nodes.map((node) => [node.id, 0]));
  for (let round = 0; round < graph.nodes.length; round++) {
    let changed = false;
    for (const edge of graph.edges) {
      const from = depth.get(edge.from);
      const to = depth.get(edge.to);
      if (from === undefined || to === undefined || to > from) continue;
      depth.set(edge.to, from + 1);
      changed = true;
    }
    if (!changed) break;
  }
  return depth;
}

/** A curve from the bottom of one node to the top of the next, ending where the arrowhead starts. */
function edgePath(from: PlacedNode, to: PlacedNode): string {
  const x1 = from.x + NODE_WIDTH / 2;
  const y1 = from.y + NODE_HEIGHT;
  const x2 = to.x + NODE_WIDTH / 2;
  const y2 = to.y - 4;
  const bend = (y2 - y1) / 2;
  return `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`;
}
