/** A unit of work that runs after the units it depends on (a planned subtask, a template node). */
export interface DependentNode {
  id: string;
  dependencies: string[];
}

/**
 * The nodes in an order where each comes after its dependencies, and the ids of those that cannot be placed:
 * the nodes on or behind a cycle.
 */
export function orderByDependencies<N extends DependentNode>(nodes: N[]): { ordered: N[]; blocked: string[] } {
  const ordered: N[] = [];
  const placed = new Set<string>();
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (const node of nodes) {
      if (!placed.has(node.id) && node.dependencies.every((id) => placed.has(id))) {
        placed.add(node.id);
        ordered.push(node);
        progressed = true;
      }
    }
  }
  return { ordered, blocked: nodes.filter((node) => !placed.has(node.id)).map((node) => node.id) };
}
