import type { Deps } from '../../deps.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

/** What the gate judges: the plan's complexity and every tool the task's agents (or template nodes) may call. */
export interface ApprovalPlan {
  complexityScore: number | null;
  /** The tools the agents are offered (their role's, as this deployment has them), not those the plan suggests. */
  offeredTools: string[];
}

/** Why a task waits for a human, what the approval lets it do, and who may decide it. */
export interface ApprovalNeed {
  reason: string;
  /** The offered tools that need approval: once approved, its agents may call these without asking again. */
  tools: string[];
  /** Only an approver other than the requester may approve it: it guards dangerous tools, or a policy rule asks for it. */
  needsOtherApprover: boolean;
}

type ApprovalSettings = { settings: Pick<TaskSnapshot['settings'], 'requireApproval' | 'approvalRule'> };

/**
 * Whether an agent may call this tool only once a human approved: bash, once enabled, always (it runs commands
 * on the server, issue 15); with approvals on, every dangerous tool (listed in APPROVAL_DANGEROUS_TOOLS, or
 * marked so in the registry).
 */
export function toolNeedsApproval(deps: Pick<Deps, 'config' | 'tools'>, tool: string): boolean {
  if (tool === 'bash' && deps.config.bash.enabled) return true;
  const policy = deps.config.approvals;
  return policy.enabled && (policy.dangerousTools.includes(tool) || deps.tools.get(tool)?.dangerous === true);
}

/**
 * Whether the task needs a human's approval before its agents run (reference §3.2), or undefined: a policy rule
 * or the task itself asks for it (`context.require_approval`), its agents are offered a tool that needs approval,
 * or approvals are enabled and the plan is complex. The plan's suggested tools do not count: the model writes
 * the plan, and an agent may call any tool it is offered whatever the plan suggests (issue 25).
 */
export function approvalNeed(deps: Pick<Deps, 'config' | 'tools'>, task: ApprovalSettings, plan: ApprovalPlan): ApprovalNeed | undefined {
  const tools = plan.offeredTools.filter((tool) => toolNeedsApproval(deps, tool));
  const reason = approvalReason(deps, task, plan, tools);
  return reason === undefined ? undefined : { reason, tools, needsOtherApprover: tools.length > 0 || task.settings.approvalRule !== undefined };
}

function approvalReason(deps: Pick<Deps, 'config'>, task: ApprovalSettings, plan: ApprovalPlan, tools: string[]): string | undefined {
  if (task.settings.approvalRule) return `policy rule ${task.settings.approvalRule} requires approval`;
  if (task.settings.requireApproval) return 'the task asks for approval (context.require_approval)';
  if (deps.config.bash.enabled && tools.includes('bash')) return 'its agents may run bash commands on the server';
  if (tools.length > 0) return `its agents are offered dangerous tools: ${tools.join(', ')}`;
  const policy = deps.config.approvals;
  if (policy.enabled && plan.complexityScore !== null && plan.complexityScore >= policy.complexityThreshold) {
    return `complexity score ${plan.complexityScore} is at or above the approval threshold ${policy.complexityThreshold}`;
  }
  return undefined;
}

/** An approval need recorded by a workflow started before issue 25 is its reason alone: it names no tools. */
export function recordedApprovalNeed(recorded: ApprovalNeed | string | null): ApprovalNeed | undefined {
  if (recorded === null) return undefined;
  return typeof recorded === 'string' ? { reason: recorded, tools: [], needsOtherApprover: false } : recorded;
}
