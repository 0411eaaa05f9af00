import type { Deps } from '../../../deps.ts';
import { currentStepId } from '../../../engine/engine.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { callToolOnce } from '../../agent-calls/agent-tool-call.ts';
import { keyedEvents, type AgentCall } from '../../agent-calls/call-agent.ts';
import { runAgent } from '../../agent-calls/run-agent.ts';
import { buildSystemPrompt } from '../../agent-calls/system-prompt.ts';
import { endsTheTask } from '../../runtime/control-errors.ts';
import type { AgentAnswer, TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { asText, fillArguments, fillPlaceholders, type PlaceholderValues } from './placeholders.ts';
import type { TemplateNode, WorkflowTemplate } from './template-file.ts';

/** What one node produced: recorded by its durable step, so a replay reads it back. */
export type NodeResult =
  | { nodeId: string; ok: true; text: string; answer?: AgentAnswer }
  | { nodeId: string; ok: false; error: string; skipped?: true };

export interface NodeRun {
  template: WorkflowTemplate;
  node: TemplateNode;
  /** Results of the nodes it depends on. */
  inputs: NodeResult[];
}

type Produced = { text: string; answer?: AgentAnswer };

/**
 * Runs one node inside the caller's durable step, announced as an agent whose id is the node id. A node's
 * failure (a tool error, a failed model call) is its result, reported as ERROR_OCCURRED; a node whose
 * dependency failed is skipped; a cancellation, the deadline or a shutdown ends the task instead.
 */
export async function runTemplateNode(deps: Deps, task: TaskSnapshot, run: NodeRun, cancel: AbortSignal): Promise<NodeResult> {
  const { node } = run;
  const failedInput = run.inputs.find((input) => !input.ok);
  if (failedInput) return { nodeId: node.id, ok: false, skipped: true, error: `skipped: ${failedInput.nodeId} failed` };
  const stepKey = `template-node:${node.id}#${currentStepId()}`;
  try {
    const produced = await produce(deps, task, run, stepKey, cancel);
    return { nodeId: node.id, ok: true, ...produced };
  } catch (error) {
    if (cancel.aborted || deps.handingOver.aborted || endsTheTask(error)) throw error;
    return failed(deps, task, stepKey, node, error instanceof Error ? error.message : String(error));
  }
}

function produce(deps: Deps, task: TaskSnapshot, run: NodeRun, stepKey: string, cancel: AbortSignal): Promise<Produced> {
  const { node } = run;
  const values = placeholderValues(task, run.inputs);
  if (node.kind === 'text') return produceText(deps, task, stepKey, node.id, fillPlaceholders(node.text, values));
  if (node.kind === 'tool') return callTool(deps, task, stepKey, node, fillArguments(node.args, values) as Record<string, unknown>, cancel);
  return callModel(deps, task, stepKey, { ...run, node }, fillPlaceholders(node.prompt, values), cancel);
}

function placeholderValues(task: TaskSnapshot, inputs: NodeResult[]): PlaceholderValues {
  return {
    query: task.query,
    params: task.settings.promptParams,
    results: Object.fromEntries(inputs.flatMap((input) => (input.ok ? [[input.nodeId, input.text]] : []))),
  };
}

async function produceText(deps: Deps, task: TaskSnapshot, stepKey: string, nodeId: string, text: string): Promise<Produced> {
  await appendEvents(deps, task.id, 'workflow', keyedEvents([started(nodeId, 'text'), completed(nodeId, { kind: 'text' })], stepKey));
  return { text };
}

async function callTool(deps: Deps, task: TaskSnapshot, stepKey: string, node: TemplateNode & { kind: 'tool' }, args: Record<string, unknown>, cancel: AbortSignal): Promise<Produced> {
  const call = { tool: node.tool, call_id: node.id };
  await appendEvents(deps, task.id, 'workflow', keyedEvents([
    started(node.id, 'tool'),
    { type: 'TOOL_INVOKED', agentId: node.id, message: `Calling ${node.tool}`, payload: { ...call, args } },
  ], `${stepKey}:invoke`));
  const tool = deps.tools.find(node.tool, task.tenantId);
  const outcome = tool ? await callToolOnce(deps, task, stepKey, tool, args, cancel) : { error: `unknown tool: ${node.tool}` };
  const output = outcome.error === undefined ? asText(outcome.output) : undefined;
  await appendEvents(deps, task.id, 'workflow', keyedEvents([
    {
      type: 'TOOL_OBSERVATION', agentId: node.id, message: (output ?? `${node.tool} failed: ${outcome.error}`).slice(0, 1000),
      payload: { ...call, output: outcome.output ?? null, ...(outcome.error === undefined ? {} : { error: outcome.error }) },
    },
    ...(output === undefined ? [] : [completed(node.id, { kind: 'tool', tool: node.tool })]),
  ], `${stepKey}:observe`));
  if (output === undefined) throw new Error(`${node.tool}: ${outcome.error}`);
  return { text: output };
}

async function callModel(deps: Deps, task: TaskSnapshot, stepKey: string, run: NodeRun & { node: TemplateNode & { kind: 'model' } }, prompt: string, cancel: AbortSignal): Promise<Produced> {
  const outcome = await runAgent(deps, task, modelCall(task, run, prompt), stepKey, cancel);
  if ('answer' in outcome) return { text: outcome.answer.text, answer: outcome.answer };
  throw new Error('a template node waits out a spent budget');
}

/** A node's role chooses its system prompt; without one, the task's system prompt or role applies. */
function modelCall(task: TaskSnapshot, run: NodeRun & { node: TemplateNode & { kind: 'model' } }, prompt: string): AgentCall {
  const { node, template } = run;
  const { role } = node;
  return {
    agentId: node.id,
    progress: `Running node ${node.id} of template ${template.name}`,
    finalAnswer: node.id === template.output,
    maxOutputTokens: task.settings.maxOutputTokens,
    system: buildSystemPrompt(role === undefined ? task.settings : { ...task.settings, systemPrompt: undefined, role }),
    messages: [{ role: 'user', content: prompt }],
    onSpentBudget: { waitAt: node.id },
  };
}

async function failed(deps: Deps, task: TaskSnapshot, stepKey: string, node: TemplateNode, error: string): Promise<NodeResult> {
  await appendEvents(deps, task.id, 'workflow', [{
    type: 'ERROR_OCCURRED', agentId: node.id, message: `Node ${node.id} failed: ${error}`.slice(0, 1000),
    payload: { node_id: node.id, error: error.slice(0, 1000) }, dedupeKey: `${stepKey}:failed`,
  }]);
  return { nodeId: node.id, ok: false, error };
}

const started = (nodeId: string, kind: string): NewTaskEvent => ({ type: 'AGENT_STARTED', agentId: nodeId, message: 'Agent started', payload: { kind } });

const completed = (nodeId: string, payload: Record<string, unknown>): NewTaskEvent => ({ type: 'AGENT_COMPLETED', agentId: nodeId, message: 'Agent completed', payload });
