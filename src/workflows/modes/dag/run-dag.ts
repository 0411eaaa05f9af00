import type { Deps } from '../../../deps.ts';
import type { Subtask, TaskPlan } from '../../planning/plan.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { orderByDependencies } from '../../team/dependency-order.ts';
import { DEFAULT_MAX_CONCURRENT_AGENTS, runInDependencyOrder } from '../../team/run-in-order.ts';
import { runSubtaskAgent, type SubtaskResult } from '../../team/subtask-agent.ts';
import { answerFromResults } from '../../team/synthesis.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';

/**
 * The DAG workflow (standard and complex modes, reference §1.6): the plan's agents run in parallel up to the
 * concurrency limit, one after another for a sequential plan, and a dependent agent starts when the agents it
 * depends on have finished, with their results. Each agent is a durable step of its own: after a crash only
 * the agents that had not finished run again. Then the results are combined into the answer.
 */
export async function runDagWorkflow(deps: Deps, task: TaskSnapshot, plan: TaskPlan, mode: string): Promise<TaskOutcome> {
  const { ordered: order, blocked } = orderByDependencies(plan.subtasks);
  if (blocked.length > 0) throw new Error(`the plan cannot run: its dependencies form a cycle (${blocked.join(', ')})`);
  await checkpoint(deps, task, 'pre_execution');
  const results = await runAgents(deps, task, plan, order);
  await checkpoint(deps, task, 'pre_synthesis');
  const answer = await answerFromResults(deps, task, plan, results);
  return { mode, answer, agentsUsed: plan.subtasks.length, complexityScore: plan.complexityScore };
}

async function runAgents(deps: Deps, task: TaskSnapshot, plan: TaskPlan, order: Subtask[]): Promise<SubtaskResult[]> {
  return withCancelWatch(deps, task.id, async (cancel) => {
    const results = await runInDependencyOrder<Subtask, SubtaskResult>(deps, {
      order, concurrency: concurrencyOf(task, plan), stepName: (subtask) => `agent:${subtask.id}`,
    }, (subtask, inputs) => runPlannedAgent(deps, task, plan, subtask, inputs, cancel));
    return plan.subtasks.map((subtask) => results.get(subtask.id)!);
  });
}

function runPlannedAgent(deps: Deps, task: TaskSnapshot, plan: TaskPlan, subtask: Subtask, inputs: SubtaskResult[], cancel: AbortSignal): Promise<SubtaskResult> {
  const failedInput = inputs.find((input) => !input.ok);
  if (failedInput) return Promise.resolve({ subtaskId: subtask.id, ok: false, error: `skipped: ${failedInput.subtaskId} failed` });
  const announce = inputs.length === 0 ? [] : [{
    type: 'DEPENDENCY_SATISFIED', agentId: subtask.id,
    message: `${subtask.id} can start: ${subtask.dependencies.join(', ')} finished`,
    payload: { subtask_id: subtask.id, dependencies: subtask.dependencies },
  }];
  return runSubtaskAgent(deps, task, { subtask, plan, inputs, attempt: 1, finalAnswer: plan.subtasks.length === 1, announce }, cancel);
}

function concurrencyOf(task: TaskSnapshot, plan: TaskPlan): number {
  if (plan.executionStrategy === 'sequential') return 1;
  return task.settings.maxConcurrentAgents ?? plan.concurrencyLimit ?? DEFAULT_MAX_CONCURRENT_AGENTS;
}
