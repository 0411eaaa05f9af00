import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import type { Subtask, TaskPlan } from '../../planning/plan.ts';
import { orderByDependencies } from '../../team/dependency-order.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { runSubtaskAgent, type SubtaskResult } from '../../team/subtask-agent.ts';
import { answerFromResults } from '../../team/synthesis.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';

export const SUPERVISOR_AGENT_ID = 'supervisor';
export const MAX_SUBTASK_ATTEMPTS = 3;

/**
 * The supervisor workflow (`mode: supervisor`, reference §1.11): a team is recruited, one specialist per
 * subtask, and the subtasks run one after another, each after a `pre_subtask_<i>` checkpoint (so a pause lands
 * between subtasks), each with its predecessors' results and up to three tries. When most of them fail the
 * task is aborted; otherwise the results are combined.
 */
export async function runSupervisorWorkflow(deps: Deps, task: TaskSnapshot, plan: TaskPlan): Promise<TaskOutcome> {
  const { ordered: order, blocked } = orderByDependencies(plan.subtasks);
  if (blocked.length > 0) throw new Error(`the plan cannot run: its dependencies form a cycle (${blocked.join(', ')})`);
  await announce(deps, task, 'recruit', recruitmentEvents(order));
  const results: SubtaskResult[] = [];
  const abortAt = Math.floor(order.length / 2) + 1;
  for (const [index, subtask] of order.entries()) {
    await checkpoint(deps, task, `pre_subtask_${index + 1}`);
    const result = await runWithRetries(deps, task, plan, subtask, results, `Working on step ${index + 1} of ${order.length}`);
    results.push(result);
    const failures = results.filter((candidate) => !candidate.ok).length;
    await announce(deps, task, `status:${subtask.id}`, [teamStatus(order, results)]);
    if (failures >= abortAt) {
      throw new Error(`supervisor aborted: ${failures} of ${order.length} subtasks failed (${failedList(results)})`);
    }
  }
  await announce(deps, task, 'retire', [{
    type: 'TEAM_RETIRED', agentId: SUPERVISOR_AGENT_ID, message: `Team of ${order.length} retired`,
    payload: { agents: order.map((subtask) => subtask.id) },
  }]);
  await checkpoint(deps, task, 'pre_synthesis');
  const answer = await answerFromResults(deps, task, plan, plan.subtasks.map((subtask) => results.find((result) => result.subtaskId === subtask.id)!));
  return { mode: 'supervisor', answer, agentsUsed: order.length, complexityScore: plan.complexityScore };
}

/** Each try is a durable step of its own; a try that fails is announced and the next one starts. */
async function runWithRetries(deps: Deps, task: TaskSnapshot, plan: TaskPlan, subtask: Subtask, earlier: SubtaskResult[], progress: string): Promise<SubtaskResult> {
  const inputs = earlier.filter((result) => subtask.dependencies.includes(result.subtaskId) || plan.executionStrategy !== 'parallel');
  let result: SubtaskResult | undefined;
  for (let attempt = 1; attempt <= MAX_SUBTASK_ATTEMPTS; attempt++) {
    const delegation = attempt === 1 ? delegationEvents(subtask, progress) : [retryEvent(subtask, attempt, result)];
    result = await runTaskStep(deps, `subtask:${subtask.id}:${attempt}`, () => withCancelWatch(deps, task.id, (cancel) =>
      runSubtaskAgent(deps, task, { subtask, plan, inputs, attempt, finalAnswer: plan.subtasks.length === 1, announce: delegation }, cancel)));
    if (result.ok) return result;
  }
  return result!;
}

function recruitmentEvents(order: Subtask[]): NewTaskEvent[] {
  return [
    {
      type: 'TEAM_RECRUITED', agentId: SUPERVISOR_AGENT_ID, message: `Recruited a team of ${order.length}`,
      payload: { agents: order.map((subtask) => ({ agent_id: subtask.id, subtask: subtask.description.slice(0, 200) })) },
    },
    ...order.map((subtask) => ({
      type: 'ROLE_ASSIGNED', agentId: subtask.id, message: `${subtask.id} takes: ${subtask.description.slice(0, 200)}`,
      payload: { agent_id: subtask.id, subtask_id: subtask.id },
    })),
  ];
}

function delegationEvents(subtask: Subtask, progress: string): NewTaskEvent[] {
  return [
    { type: 'PROGRESS', agentId: SUPERVISOR_AGENT_ID, message: progress, payload: { stage: 'execution', subtask_id: subtask.id } },
    {
      type: 'DELEGATION', agentId: SUPERVISOR_AGENT_ID, message: `Delegated ${subtask.id} to its specialist`,
      payload: { subtask_id: subtask.id, agent_id: subtask.id },
    },
  ];
}

function retryEvent(subtask: Subtask, attempt: number, previous: SubtaskResult | undefined): NewTaskEvent {
  return {
    type: 'ERROR_RECOVERY', agentId: SUPERVISOR_AGENT_ID, message: `Retrying ${subtask.id} (try ${attempt} of ${MAX_SUBTASK_ATTEMPTS})`,
    payload: { recovery: 'subtask_retry', subtask_id: subtask.id, attempt, error: previous && !previous.ok ? previous.error.slice(0, 500) : undefined },
  };
}

function teamStatus(order: Subtask[], results: SubtaskResult[]): NewTaskEvent {
  const completed = results.filter((result) => result.ok).map((result) => result.subtaskId);
  const failed = results.filter((result) => !result.ok).map((result) => result.subtaskId);
  const remaining = order.slice(results.length).map((subtask) => subtask.id);
  return {
    type: 'TEAM_STATUS', agentId: SUPERVISOR_AGENT_ID,
    message: `${completed.length} done, ${failed.length} failed, ${remaining.length} to go`,
    payload: { completed, failed, remaining },
  };
}

const failedList = (results: SubtaskResult[]) => results.flatMap((result) => (result.ok ? [] : [result.subtaskId])).join(', ');

/** Team events outside an agent's step, keyed so a replay does not repeat them. */
async function announce(deps: Deps, task: TaskSnapshot, key: string, events: NewTaskEvent[]): Promise<void> {
  await runTaskStep(deps, `announce:${key}`, () => appendEvents(deps, task.id, 'workflow',
    events.map((event, index) => ({ ...event, dedupeKey: `supervisor:${key}:${index}` }))));
}
