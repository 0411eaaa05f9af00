import { isDeepStrictEqual } from 'node:util';
import type { AgentDefinition, InputType } from './agent-file.ts';

/**
 * The input checks of spec 4.9 (reference ValidateAgentInput): required fields present and not null; every field
 * one of the schema's; each value of its type (a whole number passes as an integer; JSON cannot tell 3.0 from 3);
 * an enum value one of those allowed. Every problem is reported, required fields first, then in the input's order.
 */
export function agentInputProblems(agent: AgentDefinition, input: Record<string, unknown>): string[] {
  const { required = [], properties } = agent.input_schema;
  const problems = required.flatMap((name) => {
    if (!Object.hasOwn(input, name)) return [`missing required field: ${name}`];
    return input[name] === null ? [`required field ${name} must not be null`] : [];
  });
  for (const [name, value] of Object.entries(input)) {
    const property = properties[name];
    if (!property) {
      problems.push(`unknown field: ${name}`);
      continue;
    }
    if (value === null && required.includes(name)) continue;
    if (!isOfType(value, property.type)) {
      problems.push(`field ${name} must be ${article(property.type)} ${property.type}, got ${typeNameOf(value)}`);
    } else if (property.enum && !property.enum.some((allowed) => isDeepStrictEqual(allowed, value))) {
      problems.push(`field ${name} must be one of ${property.enum.map((allowed) => JSON.stringify(allowed)).join(', ')}, got ${JSON.stringify(value)}`);
    }
  }
  return problems;
}

/** The message of spec 4.9, problems joined by "; ". */
export const inputValidationMessage = (problems: string[]) => `input validation failed: ${problems.join('; ')}`;

/** The tool's arguments: the input, with the schema's defaults for the fields it leaves out. */
export function toolArgumentsOf(agent: AgentDefinition, input: Record<string, unknown>): Record<string, unknown> {
  const defaults = Object.entries(agent.input_schema.properties).flatMap(([name, property]) => (property.default === undefined ? [] : [[name, property.default]]));
  return { ...Object.fromEntries(defaults), ...input };
}

/** The tool's arguments: the input with its defaults, or for a batch one set per item of the batch field. */
export function toolCallsOf(agent: AgentDefinition, input: Record<string, unknown>): Array<Record<string, unknown>> {
  const args = toolArgumentsOf(agent, input);
  if (!agent.batch) return [args];
  const { input: field, argument, max_items: maxItems } = agent.batch;
  const { [field]: items, ...shared } = args;
  return (items as unknown[]).slice(0, maxItems).map((item) => ({ ...shared, [argument]: item }));
}


function isOfType(value: unknown, type: InputType): boolean {
  switch (type) {
    case 'string': return typeof value === 'string';
    case 'integer': return typeof value === 'number' && Number.isInteger(value);
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'boolean': return typeof value === 'boolean';
    case 'array': return Array.isArray(value);
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

function typeNameOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? 'an' : 'a');
