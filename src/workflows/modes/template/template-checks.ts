import { findRolePreset, roleNames } from '../../agent-calls/role-presets.ts';
import { orderByDependencies } from '../../team/dependency-order.ts';
import { paramKeyOf, placeholderNames, stringsIn } from './placeholders.ts';
import type { KnownTools, TemplateNode, WorkflowTemplate } from './template-file.ts';

/** Placeholder names that are not node results: a node may not take them as its id. */
const RESERVED_IDS = new Set(['query', 'params']);

/**
 * What makes a well-formed template unable to run: repeated or reserved ids, dependencies on nodes that do
 * not exist or that form a cycle, unknown roles and tools, an output that names no node, and placeholders
 * that name neither the task nor a node the placeholder's node depends on.
 */
export function templateProblems(template: WorkflowTemplate, tools: KnownTools): string[] {
  const graph = graphProblems(template);
  return [
    ...graph,
    ...template.nodes.flatMap((node) => referenceProblems(node, tools)),
    ...(template.nodes.some((node) => node.id === template.output) ? [] : [`output ${template.output} is not a node`]),
    ...(graph.length > 0 ? [] : template.nodes.flatMap((node) => placeholderProblems(node, template))),
  ];
}

function graphProblems(template: WorkflowTemplate): string[] {
  const ids = template.nodes.map((node) => node.id);
  const repeated = [...new Set(ids.filter((id, index) => ids.indexOf(id) !== index))].map((id) => `node id ${id} is used more than once`);
  const reserved = ids.filter((id) => RESERVED_IDS.has(id)).map((id) => `node id ${id} is reserved for the \${${id}} placeholder`);
  const unknown = template.nodes.flatMap((node) => node.dependencies.filter((dependency) => !ids.includes(dependency))
    .map((dependency) => `node ${node.id} depends on ${dependency}, which is not a node`));
  const problems = [...repeated, ...reserved, ...unknown];
  if (problems.length > 0) return problems;
  const { blocked } = orderByDependencies(template.nodes);
  return blocked.length > 0 ? [`the dependencies form a cycle (${blocked.join(', ')})`] : [];
}

function referenceProblems(node: TemplateNode, tools: KnownTools): string[] {
  if (node.kind === 'model' && node.role !== undefined && !findRolePreset(node.role)) {
    return [`node ${node.id} has unknown role ${node.role} (expected one of ${roleNames().join(', ')})`];
  }
  if (node.kind === 'tool' && !tools.get(node.tool)) return [`node ${node.id} uses unknown tool ${node.tool}`];
  return [];
}

/** A node may read the query, a prompt parameter, and the results of the nodes it depends on directly. */
function placeholderProblems(node: TemplateNode, template: WorkflowTemplate): string[] {
  const names = [...new Set(filledStrings(node).flatMap(placeholderNames))];
  return names.flatMap((name) => {
    if (name === 'query' || paramKeyOf(name) !== undefined || node.dependencies.includes(name)) return [];
    if (template.nodes.some((other) => other.id === name)) {
      return [`node ${node.id} uses \${${name}} but does not depend on ${name} (add it to depends_on)`];
    }
    return [`node ${node.id} uses unknown placeholder \${${name}} (expected \${query}, \${params.<key>} or a node it depends on)`];
  });
}

function filledStrings(node: TemplateNode): string[] {
  if (node.kind === 'model') return [node.prompt];
  if (node.kind === 'tool') return stringsIn(node.args);
  return [node.text];
}
