import { badRequest } from '../../../errors.ts';
import type { ToolRegistry } from '../../../tools/registry.ts';
import type { AgentCatalogue } from './agent-catalogue.ts';
import type { AgentDefinition } from './agent-file.ts';
import { agentInputProblems, inputValidationMessage, toolCallsOf } from './agent-input.ts';

/**
 * Checks `context.agent` and `context.agent_input` of a submission (spec 4.2 rule 7, 4.9) and completes the input:
 * a task's query fills the agent's first required text field when the input leaves it out (reference §8.2, "maps
 * query to primary field"), so `{query: "…", context: {agent: "keyword-extract"}}` works. 400 for an unknown
 * agent or an invalid input.
 */
export function prepareAgentRequest(agents: AgentCatalogue, tools: ToolRegistry, context: Record<string, unknown>, query: string): void {
  if (context.agent === undefined) return;
  if (typeof context.agent !== 'string') throw badRequest('context.agent must be a string (an agent id)');
  const agent = agents.find(context.agent);
  if (!agent) throw badRequest(`Agent not found: ${context.agent}`);
  const input = context.agent_input ?? {};
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badRequest('context.agent_input must be an object');
  context.agent_input = withQuery(agent, input as Record<string, unknown>, query);
  refuseInvalidInput(agent, tools, context.agent_input as Record<string, unknown>);
}

/**
 * Spec 4.9's checks, then the tool's own schema (ranges, lengths, patterns: `max_keywords` above 50), so that an
 * input the tool would refuse is a 400 here rather than a failed task.
 */
export function refuseInvalidInput(agent: AgentDefinition, tools: ToolRegistry, input: Record<string, unknown>): void {
  const problems = agentInputProblems(agent, input);
  if (problems.length === 0) problems.push(...toolSchemaProblems(agent, tools, input));
  if (problems.length > 0) throw badRequest(inputValidationMessage(problems));
}

function toolSchemaProblems(agent: AgentDefinition, tools: ToolRegistry, input: Record<string, unknown>): string[] {
  const batchSize = agent.batch ? (input[agent.batch.input] as unknown[] | undefined)?.length ?? 0 : 1;
  if (batchSize === 0) return [`field ${agent.batch!.input} must have at least 1 item`];
  if (agent.batch && batchSize > agent.batch.max_items) return [`field ${agent.batch.input} must have at most ${agent.batch.max_items} items`];
  const problems = toolCallsOf(agent, input).flatMap((args) => tools.inputErrors(agent.tool, args).map((error) => {
    const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    return `field ${field || 'input'} ${error.message ?? 'is invalid'}`;
  }));
  return [...new Set(problems)];
}

function withQuery(agent: AgentDefinition, input: Record<string, unknown>, query: string): Record<string, unknown> {
  const primary = (agent.input_schema.required ?? []).find((name) => agent.input_schema.properties[name].type === 'string');
  if (primary === undefined || Object.hasOwn(input, primary) || query.trim() === '') return input;
  return { ...input, [primary]: query };
}
