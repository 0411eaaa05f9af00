import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';
import type { ToolRegistry } from '../../../tools/registry.ts';

export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;
export type InputType = typeof INPUT_TYPES[number];

const InputProperty = Type.Object({
  type: Type.Enum([...INPUT_TYPES]),
  description: Type.Optional(Type.String()),
  default: Type.Optional(Type.Unknown()),
  enum: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1 })),
}, { additionalProperties: false });

/** A catalogue file (spec 2.11, reference §8.2): one agent per file, named `<id>.yaml`. */
const AgentFileSchema = Type.Object({
  id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ minLength: 1 }),
  category: Type.String({ pattern: '^[a-z0-9_]{1,64}$' }),
  tool: Type.String({ minLength: 1 }),
  input_schema: Type.Object({
    required: Type.Optional(Type.Array(Type.String())),
    properties: Type.Record(Type.String(), InputProperty),
  }, { additionalProperties: false }),
  output_schema: Type.Record(Type.String(), Type.Unknown()),
  cost_per_call: Type.Number({ minimum: 0 }),
  timeout_seconds: Type.Integer({ minimum: 1, maximum: 3600 }),
  /** The tool runs once per item of an array input field, given as one argument (e.g. `urls` → `url`). */
  batch: Type.Optional(Type.Object({
    input: Type.String({ minLength: 1 }),
    argument: Type.String({ minLength: 1 }),
    max_items: Type.Integer({ minimum: 1, maximum: 20 }),
  }, { additionalProperties: false })),
  /** A model step after the tool: the image the tool saved (`path` in its output) goes to a vision model with this prompt. */
  vision: Type.Optional(Type.Object({
    prompt: Type.String({ minLength: 1 }),
    system: Type.Optional(Type.String({ minLength: 1 })),
    model_tier: Type.Optional(Type.Enum(['small', 'medium', 'large'])),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

export type AgentFile = Static<typeof AgentFileSchema>;
export type InputProperty = Static<typeof InputProperty>;

export interface AgentDefinition extends AgentFile {
  /** Where it was loaded from, for messages. */
  file: string;
}

export type AgentFileCheck = { agent: AgentDefinition } | { problems: string[] };

/** Reads one catalogue file: the agent, or every problem found in it (for a message that names the file). */
export function parseAgentFile(file: string, source: string, tools: Pick<ToolRegistry, 'get'>): AgentFileCheck {
  let data: unknown;
  try {
    data = parse(source);
  } catch (error) {
    return { problems: [`not valid YAML: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`] };
  }
  const schemaProblems = [...new Set(Value.Errors(AgentFileSchema, data).map((problem) => `${problem.instancePath || '/'}: ${problem.message}`))];
  if (schemaProblems.length > 0) return { problems: schemaProblems };
  const agent = { ...(data as AgentFile), file };
  const problems = [...namingProblems(agent), ...inputProblems(agent), ...toolProblems(agent, tools)];
  return problems.length > 0 ? { problems } : { agent };
}

function namingProblems(agent: AgentDefinition): string[] {
  const expected = `${agent.id}.yaml`;
  return path.basename(agent.file) === expected ? [] : [`the file of agent ${agent.id} must be named ${expected}`];
}

function inputProblems(agent: AgentDefinition): string[] {
  const { required = [], properties } = agent.input_schema;
  const batch = agent.batch;
  const batchProblems = batch && properties[batch.input]?.type !== 'array' ? [`batch: input field ${batch.input} must be an array field of input_schema`] : [];
  const undeclared = required.filter((name) => !(name in properties)).map((name) => `input_schema: required field ${name} is not among its properties`);
  const badDefaults = Object.entries(properties)
    .filter(([, property]) => property.enum !== undefined && property.default !== undefined && !property.enum.some((value) => Value.Equal(value, property.default)))
    .map(([name]) => `input_schema: the default of ${name} is not one of its enum values`);
  return [...batchProblems, ...undeclared, ...badDefaults];
}

/** The tool must exist and accept every input field; the fields it requires must be required (or defaulted) here. */
function toolProblems(agent: AgentDefinition, tools: Pick<ToolRegistry, 'get'>): string[] {
  const tool = tools.get(agent.tool);
  if (!tool) return [`tool ${agent.tool} is not a tool of this server`];
  const toolProperties = (tool.parameters.properties ?? {}) as Record<string, unknown>;
  const { required = [], properties } = agent.input_schema;
  const batched = agent.batch ? [agent.batch.input] : [];
  if (agent.batch && !(agent.batch.argument in toolProperties)) return [`batch: tool ${agent.tool} has no parameter ${agent.batch.argument}`];
  const given = [...required, ...(agent.batch ? [agent.batch.argument] : [])];
  const unknown = Object.keys(properties).filter((name) => !(name in toolProperties) && !batched.includes(name)).map((name) => `input_schema: tool ${agent.tool} has no parameter ${name}`);
  const missing = ((tool.parameters.required ?? []) as string[])
    .filter((name) => !given.includes(name) && properties[name]?.default === undefined)
    .map((name) => `input_schema: tool ${agent.tool} requires ${name}; require it or give it a default`);
  return [...unknown, ...missing];
}
