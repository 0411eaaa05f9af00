import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';
import type { ToolRegistry } from '../../../tools/registry.ts';
import { templateProblems } from './template-checks.ts';
import { isTemplateVersion, versionProblem } from './template-version.ts';

/** The most nodes one template may have: a fixed DAG a person wrote, not a generated one. */
export const MAX_TEMPLATE_NODES = 50;

const NodeSchema = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  kind: Type.Enum(['model', 'tool', 'text']),
  depends_on: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_TEMPLATE_NODES })),
  prompt: Type.Optional(Type.String({ minLength: 1 })),
  role: Type.Optional(Type.String({ minLength: 1 })),
  tool: Type.Optional(Type.String({ minLength: 1 })),
  args: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  text: Type.Optional(Type.String()),
}, { additionalProperties: false });

const TemplateFileSchema = Type.Object({
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,199}$' }),
  /** A semantic version, checked and compared with semver (template-version.ts): 1.10.0 is newer than 1.9.2. */
  version: Type.String({ maxLength: 64 }),
  description: Type.String(),
  nodes: Type.Array(NodeSchema, { minItems: 1, maxItems: MAX_TEMPLATE_NODES }),
  /** The node whose result is the task's answer; the last node when absent. */
  output: Type.Optional(Type.String()),
}, { additionalProperties: false });

type NodeEntry = Static<typeof NodeSchema>;
export type NodeKind = NodeEntry['kind'];

interface NodeBase { id: string; dependencies: string[] }
export type TemplateNode =
  | NodeBase & { kind: 'model'; prompt: string; role?: string }
  | NodeBase & { kind: 'tool'; tool: string; args: Record<string, unknown> }
  | NodeBase & { kind: 'text'; text: string };

/** A workflow template: a fixed DAG of nodes a task runs instead of a plan made by a model. */
export interface WorkflowTemplate {
  name: string;
  version: string;
  description: string;
  /** In file order; each runs after its dependencies. */
  nodes: TemplateNode[];
  output: string;
  /** Where it was loaded from, for messages. */
  file: string;
}

export type KnownTools = Pick<ToolRegistry, 'get'>;

/** The fields each kind of node needs, and those it may have besides. */
const KIND_FIELDS: Record<NodeKind, { required: readonly string[]; optional: readonly string[] }> = {
  model: { required: ['prompt'], optional: ['role'] },
  tool: { required: ['tool'], optional: ['args'] },
  text: { required: ['text'], optional: [] },
};
const KIND_SPECIFIC_FIELDS = ['prompt', 'role', 'tool', 'args', 'text'] as const;

/** A template file read: the template, or every problem found in it (for a message that names the file). */
export type TemplateFileCheck = { template: WorkflowTemplate } | { problems: string[] };

export function parseTemplateFile(file: string, source: string, tools: KnownTools): TemplateFileCheck {
  let data: unknown;
  try {
    data = parse(source);
  } catch (error) {
    return { problems: [`not valid YAML: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`] };
  }
  const schemaProblems = schemaProblemsOf(data);
  if (schemaProblems.length > 0) return { problems: schemaProblems };
  const entries = (data as Static<typeof TemplateFileSchema>).nodes;
  const fieldProblems = entries.flatMap(kindFieldProblems);
  if (fieldProblems.length > 0) return { problems: fieldProblems };
  const template = toTemplate(data as Static<typeof TemplateFileSchema>, file);
  const problems = templateProblems(template, tools);
  return problems.length > 0 ? { problems } : { template };
}

/** One line per problem; an unknown field is named once, by its own path. */
function schemaProblemsOf(data: unknown): string[] {
  const problems = Value.Errors(TemplateFileSchema, data)
    .filter((problem) => problem.keyword !== 'additionalProperties')
    .map((problem) => `${problem.instancePath || '/'}: ${problem.keyword === 'boolean' ? 'unknown field' : problem.message}${hintFor(problem.instancePath, data)}`);
  const version = (data as { version?: unknown } | null)?.version;
  if (typeof version === 'string' && !isTemplateVersion(version)) problems.push(`/version: ${versionProblem(version)}`);
  return [...new Set(problems)];
}

/** YAML reads `version: 1.0` as a number. */
const hintFor = (instancePath: string, data: unknown) =>
  instancePath === '/version' && typeof (data as { version?: unknown }).version === 'number' ? ' (quote it: version: "1.0.0")' : '';

function kindFieldProblems(entry: NodeEntry): string[] {
  const { required, optional } = KIND_FIELDS[entry.kind];
  const missing = required.filter((field) => entry[field as keyof NodeEntry] === undefined)
    .map((field) => `node ${entry.id} (${entry.kind}) needs ${field}`);
  const foreign = KIND_SPECIFIC_FIELDS.filter((field) => entry[field] !== undefined && !required.includes(field) && !optional.includes(field))
    .map((field) => `node ${entry.id} (${entry.kind}) does not take ${field}`);
  return [...missing, ...foreign];
}

function toTemplate(data: Static<typeof TemplateFileSchema>, file: string): WorkflowTemplate {
  return {
    name: data.name,
    version: data.version,
    description: data.description,
    nodes: data.nodes.map(toNode),
    output: data.output ?? data.nodes[data.nodes.length - 1].id,
    file,
  };
}

function toNode(entry: NodeEntry): TemplateNode {
  const base = { id: entry.id, dependencies: [...new Set(entry.depends_on ?? [])] };
  if (entry.kind === 'model') return { ...base, kind: 'model', prompt: entry.prompt!, ...(entry.role === undefined ? {} : { role: entry.role }) };
  if (entry.kind === 'tool') return { ...base, kind: 'tool', tool: entry.tool!, args: entry.args ?? {} };
  return { ...base, kind: 'text', text: entry.text! };
}

/** The ids of the nodes that call a model: a template with none runs with `disable_ai`. */
export function modelNodeIds(template: WorkflowTemplate): string[] {
  return template.nodes.filter((node) => node.kind === 'model').map((node) => node.id);
}

export function requiresModel(template: WorkflowTemplate): boolean {
  return modelNodeIds(template).length > 0;
}
