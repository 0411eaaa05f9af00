import type { Deps } from '../../deps.ts';
import { appendEvents } from '../../task-state/change-task.ts';
import { availableToolNames } from '../agent-calls/role-tools.ts';
import { passApprovalGate } from '../runtime/approval-gate.ts';
import { approvalNeed, recordedApprovalNeed, type ApprovalNeed } from '../runtime/approval-need.ts';
import { checkpoint } from '../runtime/checkpoint.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';
import { decompose, type PlanningHint } from './decompose.ts';
import { parseDecomposition, planPayload, singleSubtaskPlan, type TaskPlan } from './plan.ts';

/**
 * The plan a multi-agent mode runs: one subtask for a client-chosen role (when no mode was named), else a
 * decomposition call told the mode asked for; announced, then past the approval gate when it needs one.
 */
export async function approvedPlanOf(deps: Deps, task: TaskSnapshot, hint: PlanningHint): Promise<TaskPlan> {
  const planned = await planTask(deps, task, hint);
  return planned.approvalNeed ? approvedPlan(deps, task, planned.plan, planned.approvalNeed) : planned.plan;
}

/**
 * The plan, announced, and whether it needs approval, judged by the tools its agents are offered (every agent of
 * a plan gets the task's role's tools): decided in the announcing step, so replays agree.
 */
async function planTask(deps: Deps, task: TaskSnapshot, hint: PlanningHint): Promise<{ plan: TaskPlan; approvalNeed: ApprovalNeed | undefined }> {
  const plan = task.settings.roleAssigned && hint === undefined ? await assignRole(deps, task) : await decompose(deps, task, hint);
  await checkpoint(deps, task, 'post_decomposition');
  const need = await runTaskStep(deps, 'announce-plan', async (): Promise<ApprovalNeed | string | null> => {
    await appendEvents(deps, task.id, 'workflow', [{
      type: 'PROGRESS', agentId: 'orchestrator', message: `Planned ${plan.subtasks.length} ${plan.subtasks.length === 1 ? 'subtask' : 'subtasks'}`,
      payload: { stage: 'planned', ...planPayload(plan) }, dedupeKey: 'plan',
    }]);
    return approvalNeed(deps, task, { complexityScore: plan.complexityScore, offeredTools: availableToolNames(deps.tools, task.tenantId, task.settings.role) }) ?? null;
  });
  return { plan, approvalNeed: recordedApprovalNeed(need) };
}

/** A client-chosen role skips decomposition: one subtask, run by an agent with the role's tools. */
async function assignRole(deps: Deps, task: TaskSnapshot): Promise<TaskPlan> {
  const tools = availableToolNames(deps.tools, task.tenantId, task.settings.role);
  await runTaskStep(deps, 'assign-role', () => appendEvents(deps, task.id, 'workflow', [{
    type: 'ROLE_ASSIGNED', agentId: 'task-1', message: `Role ${task.settings.role} assigned`,
    payload: { role: task.settings.role, tools }, dedupeKey: 'role-assigned',
  }]));
  // The role's tools are offered to its agent; they are not suggestions for it to use.
  return singleSubtaskPlan(task.query, 0.5);
}

/**
 * The approval gate (reference §3.2): an approver may hand back a modified plan, which runs when it is a valid plan;
 * it is announced as the plan (a PROGRESS at stage `planned` again), so what watches the task sees what runs.
 */
async function approvedPlan(deps: Deps, task: TaskSnapshot, plan: TaskPlan, need: ApprovalNeed): Promise<TaskPlan> {
  const { modifiedAction } = await passApprovalGate(deps, task, { ...need, action: planPayload(plan) });
  if (modifiedAction === undefined) return plan;
  const modified = parseDecomposition(modifiedAction);
  if (typeof modified === 'string') return plan;
  await runTaskStep(deps, 'announce-approved-plan', () => appendEvents(deps, task.id, 'workflow', [{
    type: 'PROGRESS', agentId: 'orchestrator', message: `The approver changed the plan: ${modified.subtasks.length} ${modified.subtasks.length === 1 ? 'subtask' : 'subtasks'}`,
    payload: { stage: 'planned', ...planPayload(modified), changed_by_approver: true }, dedupeKey: 'plan:approved',
  }]));
  return modified;
}
