import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { callToolOnce } from '../../agent-calls/agent-tool-call.ts';
import { keyedEvents } from '../../agent-calls/call-agent.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { AgentAnswer, TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import type { AgentDefinition } from './agent-file.ts';
import { toolCallsOf } from './agent-input.ts';
import { agentFailed, type AgentRun, type ToolResult } from './agent-run.ts';
import { lookAtImages } from './vision-step.ts';

export const NAMED_AGENT_MODE = 'named_agent';

/**
 * A single-purpose agent (spec 1, 4.9; reference §8.2): its tool runs on the task's `agent_input` (once, or once per
 * item of a batch), with no planning, as one durable step; an agent whose tool saves an image then has it looked at
 * by a vision model, a second step. The result, as JSON, is the task's result. The catalogue entry is read when the
 * first step runs, so a replay uses what the step recorded.
 */
export async function runNamedAgent(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const agentId = task.settings.agent!;
  await checkpoint(deps, task, 'pre_execution');
  const run = await runTaskStep(deps, `agent:${agentId}`, () => withCancelWatch(deps, task.id, (cancel) => runAgentTool(deps, task, agentId, cancel)));
  if (!run.ok) throw new Error(`agent ${agentId} failed: ${run.error}`);
  const { agent } = run;
  const seen = agent.vision ? await runTaskStep(deps, `agent:${agentId}:vision`, () => withCancelWatch(deps, task.id, (cancel) => lookAtImages(deps, task, agent, run.results, cancel))) : undefined;
  const results = seen?.results ?? run.results;
  await announceCompleted(deps, task, agentId, agent);
  return {
    mode: NAMED_AGENT_MODE,
    answer: { ...(seen?.usage ?? NO_MODEL), agentId, text: JSON.stringify(agent.batch ? { items: results } : resultOf(results[0])) },
    agentsUsed: 1,
    complexityScore: null,
    metadata: { agent_id: agentId, tool: agent.tool },
  };
}

const NO_MODEL: Omit<AgentAnswer, 'agentId' | 'text'> = { model: 'none', provider: 'agent', inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0, attempts: 0 };

const resultOf = (result: ToolResult) => (result.ok ? result.output : { error: result.error });

async function runAgentTool(deps: Deps, task: TaskSnapshot, agentId: string, cancel: AbortSignal): Promise<AgentRun> {
  const stepKey = `agent:${agentId}`;
  const agent = deps.agents.find(agentId);
  // Submission checked it; the catalogue may have changed since (a restart with other files).
  if (!agent) return agentFailed(deps, task, stepKey, agentId, `agent ${agentId} is no longer in the catalogue`);
  const tool = deps.tools.find(agent.tool, task.tenantId);
  if (!tool) return agentFailed(deps, task, stepKey, agentId, `tool ${agent.tool} is not available`);
  const calls = toolCallsOf(agent, (task.context.agent_input ?? {}) as Record<string, unknown>);
  await appendEvents(deps, task.id, 'workflow', keyedEvents([
    { type: 'AGENT_STARTED', agentId, message: `Agent ${agent.name} started`, payload: { agent_id: agentId, tool: agent.tool, category: agent.category } },
    ...calls.map((args) => ({ type: 'TOOL_INVOKED', agentId, message: `Calling ${agent.tool}`, payload: { tool: agent.tool, args } })),
  ], `${stepKey}:start`));
  const results: ToolResult[] = [];
  for (const [index, args] of calls.entries()) {
    const outcome = await callToolOnce(deps, task, calls.length === 1 ? stepKey : `${stepKey}#${index}`, tool, args, cancel);
    results.push(outcome.error === undefined ? { ok: true, args, output: outcome.output } : { ok: false, args, error: outcome.error });
  }
  await appendEvents(deps, task.id, 'workflow', keyedEvents(results.map((result) => observationOf(agent, result)), `${stepKey}:observed`));
  const firstFailure = results.find((result): result is Extract<ToolResult, { ok: false }> => !result.ok);
  // A batch fails only when every item does; each failed item is reported in the result.
  if (firstFailure && results.every((result) => !result.ok)) return agentFailed(deps, task, stepKey, agentId, firstFailure.error);
  return { ok: true, agent, results };
}

const observationOf = (agent: AgentDefinition, result: ToolResult): NewTaskEvent => ({
  type: 'TOOL_OBSERVATION', agentId: agent.id,
  message: (result.ok ? `Tool ${agent.tool} returned` : `Tool ${agent.tool} failed: ${result.error}`).slice(0, 1000),
  payload: { tool: agent.tool, ...(result.ok ? {} : { error: result.error.slice(0, 1000) }) },
});

async function announceCompleted(deps: Deps, task: TaskSnapshot, agentId: string, agent: AgentDefinition): Promise<void> {
  await runTaskStep(deps, `agent:${agentId}:completed`, () => appendEvents(deps, task.id, 'workflow', [{
    type: 'AGENT_COMPLETED', agentId, message: `Agent ${agent.name} completed`,
    payload: { agent_id: agentId, tool: agent.tool, cost_usd: agent.cost_per_call }, dedupeKey: `agent:${agentId}:completed`,
  }]));
}
