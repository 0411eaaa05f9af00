import type { Deps } from '../../../deps.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { passApprovalGate } from '../../runtime/approval-gate.ts';
import { approvalNeed, type ApprovalNeed } from '../../runtime/approval-need.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { AgentAnswer, TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { orderByDependencies } from '../../team/dependency-order.ts';
import { DEFAULT_MAX_CONCURRENT_AGENTS, runInDependencyOrder } from '../../team/run-in-order.ts';
import { modelNodeIds, type TemplateNode, type WorkflowTemplate } from './template-file.ts';
import { runTemplateNode, type NodeResult } from './template-nodes.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';

export const TEMPLATE_MODE = 'template';

/**
 * The template workflow (reference §1.3 step 4): the template's fixed DAG of nodes instead of a plan made by
 * a model. It passes the approval gate as a plan does, its tool nodes judged as agents' tools. Nodes run in
 * dependency order, each a durable step of its own, independent ones in parallel; the output node's result is
 * the answer. A node that fails fails the task, naming the node.
 */
export async function runTemplateWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  // The template is recorded by this step: a replay runs the nodes it started with, even if the files changed.
  const { template, approvalNeed } = startedTemplate(await runTaskStep(deps, 'start-template', () => startTemplate(deps, task)));
  if (approvalNeed) await passApprovalGate(deps, task, { ...approvalNeed, action: { template: template.name, version: template.version, query: task.query } });
  await checkpoint(deps, task, 'pre_execution');
  const results = await withCancelWatch(deps, task.id, (cancel) => runInDependencyOrder<TemplateNode, NodeResult>(deps, {
    order: orderByDependencies(template.nodes).ordered,
    concurrency: task.settings.maxConcurrentAgents ?? DEFAULT_MAX_CONCURRENT_AGENTS,
    stepName: (node) => `template-node:${node.id}`,
  }, (node, inputs) => runTemplateNode(deps, task, { template, node, inputs }, cancel)));
  const failure = template.nodes.map((node) => results.get(node.id)!).find(isFailure);
  if (failure) throw new Error(`template ${template.name} node ${failure.nodeId} failed: ${failure.error}`);
  return {
    mode: TEMPLATE_MODE,
    answer: answerOf(results.get(template.output)!),
    agentsUsed: template.nodes.length,
    complexityScore: null,
  };
}

interface StartedTemplate {
  template: WorkflowTemplate;
  /** Whether it waits for a human first, judged by the tools its nodes run (as a plan by its agents' tools). */
  approvalNeed: ApprovalNeed | null;
}

/** A workflow started before issue 25 recorded the template alone, and no approval. */
const startedTemplate = (recorded: StartedTemplate | WorkflowTemplate): StartedTemplate =>
  ('nodes' in recorded ? { template: recorded, approvalNeed: null } : recorded);

/**
 * Finds the template the task names and announces it. Submission checked both; the files may have changed
 * since (a restart with other templates), so a template gone, or one that now needs a model, fails the task.
 */
async function startTemplate(deps: Deps, task: TaskSnapshot): Promise<StartedTemplate> {
  const { name, version } = task.settings.template!;
  const template = deps.templates.find(name, version);
  if (!template) throw new Error(version === undefined ? `template ${name} not found` : `template ${name} version ${version} not found`);
  const modelNodes = modelNodeIds(template);
  if (task.settings.disableAi && modelNodes.length > 0) {
    throw new Error(`disable_ai: template ${name} ${template.version} calls a model (node ${modelNodes.join(', ')})`);
  }
  await appendEvents(deps, task.id, 'workflow', [{
    type: 'PROGRESS', agentId: 'orchestrator', message: `Running template ${template.name} ${template.version}`,
    payload: {
      template: template.name,
      version: template.version,
      nodes: template.nodes.map((node) => ({ id: node.id, kind: node.kind, depends_on: node.dependencies })),
    },
    dedupeKey: 'template-started',
  }]);
  const toolNodes = template.nodes.flatMap((node) => (node.kind === 'tool' ? [node.tool] : []));
  return { template, approvalNeed: approvalNeed(deps, task, { complexityScore: null, offeredTools: toolNodes }) ?? null };
}

/** A node that failed itself, not one skipped because a node it depends on failed. */
const isFailure = (result: NodeResult): result is Extract<NodeResult, { ok: false }> => !result.ok && !result.skipped;

/** A model node's answer as it is; any other node's text, answered by no model. */
function answerOf(result: NodeResult): AgentAnswer {
  if (!result.ok) throw new Error(`template output ${result.nodeId} has no result: ${result.error}`);
  return result.answer ?? {
    agentId: result.nodeId, text: result.text, model: 'none', provider: 'template',
    inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0, attempts: 0,
  };
}
