import type { Static } from 'typebox';
import type { AgentDefinition } from '../workflows/modes/named-agent/agent-file.ts';
import type { AgentView } from './schemas.ts';

/** An agent as the API shows it (spec 2.11): the catalogue entry without where it was read from. */
export function toAgentView(agent: AgentDefinition): Static<typeof AgentView> {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    category: agent.category,
    tool: agent.tool,
    input_schema: { required: agent.input_schema.required ?? [], properties: agent.input_schema.properties },
    output_schema: agent.output_schema,
    cost_per_call: agent.cost_per_call,
    timeout_seconds: agent.timeout_seconds,
  };
}
