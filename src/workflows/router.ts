import type { Deps } from '../deps.ts';
import { appendEvents } from '../task-state/change-task.ts';
import { availableToolNames } from './agents/role-tools.ts';
import { runDagWorkflow } from './modes/dag/run-dag.ts';
import { runSimpleWorkflow } from './modes/simple.ts';
import { runSupervisorWorkflow } from './modes/supervisor/run-supervisor.ts';
import { runTemplateWorkflow } from './modes/template/run-template.ts';
import { decompose, type PlanningHint } from './planning/decompose.ts';
import { isSimplePlan, parseDecomposition, planPayload, singleSubtaskPlan, type TaskPlan } from './planning/plan.ts';
import { passApprovalGate } from './runtime/approval-gate.ts';
import { approvalNeed, recordedApprovalNeed, type ApprovalNeed } from './runtime/approval-need.ts';
import { checkpoint } from './runtime/checkpoint.ts';
import type { TaskOutcome } from './runtime/task-lifecycle.ts';
import type { TaskSnapshot } from './runtime/task-snapshot.ts';
import { runTaskStep } from './runtime/task-step.ts';

/** The task modes this deployment runs (spec 2.1); the submission and the OpenAI layer offer only these. */
export const SERVED_MODES: readonly string[] = ['simple', 'standard', 'complex', 'supervisor'];

/** The mode a task starts in: the one it asked for, else the deployment's default (`auto` until routed). */
export function startingMode(deps: Deps, requestedMode: string | null): string {
  return requestedMode ?? deps.config.defaultTaskMode;
}

/**
 * Chooses and runs the task's workflow (reference §1.3): an explicit simple mode answers at once; otherwise
 * the task is planned — one subtask for an assigned role, else a decomposition call — and the plan runs
 * as a supervised team (`supervisor`), a DAG of agents (`standard`, `complex`, or a plan too big for one
 * agent), or as a simple task when it is one tool-less subtask of low complexity.
 */
export async function routeTask(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  if (task.settings.template) return runTemplateWorkflow(deps, task);
  const mode = task.mode ?? startingMode(deps, task.requestedMode);
  if (mode === 'simple') {
    // Without a plan (and without tools) only the task's own request for approval counts: the same on every replay.
    const need = approvalNeed(deps, task, { complexityScore: null, offeredTools: [] });
    if (need) await passApprovalGate(deps, task, { ...need, action: { query: task.query } });
    return runSimpleWorkflow(deps, task);
  }
  const planned = await planTask(deps, task, mode);
  const plan = planned.approvalNeed ? await approvedPlan(deps, task, planned.plan, planned.approvalNeed) : planned.plan;
  if (mode === 'supervisor') return runSupervisorWorkflow(deps, task, plan);
  if (mode === 'auto' && isSimplePlan(plan)) return { ...await runSimpleWorkflow(deps, task), complexityScore: plan.complexityScore };
  return runDagWorkflow(deps, task, plan, mode === 'auto' ? 'standard' : mode);
}

/**
 * The plan, announced, and whether it needs approval, judged by the tools its agents are offered (every agent of
 * a plan gets the task's role's tools): decided in the announcing step, so replays agree.
 */
async function planTask(deps: Deps, task: TaskSnapshot, mode: string): Promise<{ plan: TaskPlan; approvalNeed: ApprovalNeed | undefined }> {
  const plan = task.settings.roleAssigned && mode === 'auto'
    ? await assignRole(deps, task)
    : await decompose(deps, task, mode === 'auto' ? undefined : mode as PlanningHint);
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

/** The approval gate (reference §3.2): an approver may hand back a modified plan, which runs when it is a valid plan. */
async function approvedPlan(deps: Deps, task: TaskSnapshot, plan: TaskPlan, need: ApprovalNeed): Promise<TaskPlan> {
  const { modifiedAction } = await passApprovalGate(deps, task, { ...need, action: planPayload(plan) });
  if (modifiedAction === undefined) return plan;
  const modified = parseDecomposition(modifiedAction);
  return typeof modified === 'string' ? plan : modified;
}
