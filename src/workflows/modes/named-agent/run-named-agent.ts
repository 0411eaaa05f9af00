import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { callToolOnce } from '../../agent-calls/agent-tool-call.ts';
import { keyedEvents } from '../../agent-calls/call-agent.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import type { AgentDefinition } from './agent-file.ts';
import { toolArgumentsOf } from './agent-input.ts';

export const NAMED_AGENT_MODE = 'named_agent';

/** What the agent's step records: the tool's output, or why it has none. */
type AgentRun = { ok: true; output: unknown } | { ok: false; error: string };

/**
 * A single-purpose agent (spec 1, 4.9; reference §8.2): its tool runs once on the task's `agent_input`, with no
 * planning and no model call, as one durable step; the tool's output, as JSON, is the task's result. The catalogue
 * entry is read when the step runs, so a replay uses what the step recorded.
 */
export async function runNamedAgent(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const agentId = task.settings.agent!;
  await checkpoint(deps, task, 'pre_execution');
  const run = await runTaskStep(deps, `agent:${agentId}`, () => withCancelWatch(deps, task.id, (cancel) => runAgentTool(deps, task, agentId, cancel)));
  if (!run.ok) throw new Error(`agent ${agentId} failed: ${run.error}`);
  return {
    mode: NAMED_AGENT_MODE,
    answer: { agentId, text: JSON.stringify(run.output), model: 'none', provider: 'agent', inputTokens: 0, outputTokens: 0, costUsd: 0, attempts: 0 },
    agentsUsed: 1,
    complexityScore: null,
    metadata: { agent_id: agentId, tool: deps.agents.find(agentId)?.tool ?? null },
  };
}

async function runAgentTool(deps: Deps, task: TaskSnapshot, agentId: string, cancel: AbortSignal): Promise<AgentRun> {
  const stepKey = `agent:${agentId}`;
  const agent = deps.agents.find(agentId);
  // Submission checked it; the catalogue may have changed since (a restart with other files).
  if (!agent) return failed(deps, task, stepKey, agentId, `agent ${agentId} is no longer in the catalogue`);
  const tool = deps.tools.find(agent.tool, task.tenantId);
  if (!tool) return failed(deps, task, stepKey, agentId, `tool ${agent.tool} is not available`);
  const args = toolArgumentsOf(agent, inputOf(task));
  await appendEvents(deps, task.id, 'workflow', keyedEvents([
    { type: 'AGENT_STARTED', agentId, message: `Agent ${agent.name} started`, payload: { agent_id: agentId, tool: agent.tool, category: agent.category } },
    { type: 'TOOL_INVOKED', agentId, message: `Calling ${agent.tool}`, payload: { tool: agent.tool, args } },
  ], `${stepKey}:start`));
  const outcome = await callToolOnce(deps, task, stepKey, tool, args, cancel);
  if (outcome.error !== undefined) return failed(deps, task, stepKey, agentId, outcome.error, agent);
  await appendEvents(deps, task.id, 'workflow', keyedEvents([
    { type: 'TOOL_OBSERVATION', agentId, message: `Tool ${agent.tool} returned`, payload: { tool: agent.tool } },
    { type: 'AGENT_COMPLETED', agentId, message: `Agent ${agent.name} completed`, payload: { agent_id: agentId, tool: agent.tool, cost_usd: agent.cost_per_call } },
  ], `${stepKey}:done`));
  return { ok: true, output: outcome.output };
}

const inputOf = (task: TaskSnapshot) => (task.context.agent_input ?? {}) as Record<string, unknown>;

async function failed(deps: Deps, task: TaskSnapshot, stepKey: string, agentId: string, error: string, agent?: AgentDefinition): Promise<AgentRun> {
  const events: NewTaskEvent[] = [
    ...(agent ? [{ type: 'TOOL_OBSERVATION', agentId, message: `Tool ${agent.tool} failed: ${error}`.slice(0, 1000), payload: { tool: agent.tool, error: error.slice(0, 1000) } }] : []),
    { type: 'ERROR_OCCURRED', agentId, message: `Agent ${agentId} failed: ${error}`.slice(0, 1000), payload: { agent_id: agentId, error: error.slice(0, 1000) } },
  ];
  await appendEvents(deps, task.id, 'workflow', keyedEvents(events, `${stepKey}:failed`));
  return { ok: false, error };
}
