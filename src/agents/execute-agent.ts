import type { Context } from '@opentelemetry/api';
import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { submitTask, type SubmittedTask } from '../tasks/submit-task.ts';
import { refuseInvalidInput } from '../workflows/modes/named-agent/agent-request.ts';
import type { AgentDefinition } from '../workflows/modes/named-agent/agent-file.ts';
import type { ExecuteAgentBody } from './schemas.ts';

export function findAgent(deps: Deps, id: string): AgentDefinition {
  const agent = deps.agents.find(id);
  if (!agent) throw notFound(`Agent not found: ${id}`);
  return agent;
}

/**
 * POST /agents/{id} (spec 4.9): the input checked first (400, nothing written), then an ordinary task with
 * `context.agent` and `context.agent_input` (rule 7), its time limit the agent's `timeout_seconds`.
 */
export async function executeAgent(deps: Deps, caller: Caller, id: string, body: Static<typeof ExecuteAgentBody>, options: { taskId?: string; traceContext?: Context }): Promise<SubmittedTask> {
  const agent = findAgent(deps, id);
  refuseInvalidInput(agent, deps.tools, body.input);
  return submitTask(deps, caller, {
    query: `Execute agent ${agent.id}`,
    session_id: body.session_id,
    context: { agent: agent.id, agent_input: body.input },
  }, { ...options, serverOptions: { timeout_seconds: agent.timeout_seconds } });
}
