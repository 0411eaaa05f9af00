import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ApprovalStatus } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { appendEvents, changeTask } from '../../task-state/change-task.ts';
import { ApprovalDeniedError, TaskCancelledError, TaskParkedError } from './control-errors.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

export interface ApprovalPlan {
  complexityScore: number | null;
  suggestedTools: string[];
  /** Every tool the plan's agents will be offered (their role's). */
  offeredTools?: string[];
}
export interface ApprovalRequest { reason: string; action: unknown }

interface ApprovalTicket { approvalId: string; requestedAtMs: number }
interface ApprovalState {
  status: ApprovalStatus;
  feedback: string | null;
  modifiedAction: unknown;
  decidedBy: string | null;
  cancelRequested: boolean;
}

/**
 * Why the task's plan needs a human's approval, or undefined when it does not (reference §3.2): the task asks
 * for it (`context.require_approval`), or approvals are enabled and the plan is complex or suggests a
 * dangerous tool (listed in APPROVAL_DANGEROUS_TOOLS, or marked so in the tool registry).
 */
export function approvalReason(deps: Pick<Deps, 'config' | 'tools'>, task: { settings: Pick<TaskSnapshot['settings'], 'requireApproval' | 'approvalRule'> }, plan: ApprovalPlan): string | undefined {
  if (task.settings.approvalRule) return `policy rule ${task.settings.approvalRule} requires approval`;
  if (task.settings.requireApproval) return 'the task asks for approval (context.require_approval)';
  // Shell commands on the server are approved by a human whatever the other settings (issue 15).
  if (deps.config.bash.enabled && plan.offeredTools?.includes('bash')) return 'its agents may run bash commands on the server';
  const policy = deps.config.approvals;
  if (!policy.enabled) return undefined;
  if (plan.complexityScore !== null && plan.complexityScore >= policy.complexityThreshold) {
    return `complexity score ${plan.complexityScore} is at or above the approval threshold ${policy.complexityThreshold}`;
  }
  const dangerous = plan.suggestedTools.filter((tool) => policy.dangerousTools.includes(tool) || deps.tools.get(tool)?.dangerous === true);
  if (dangerous.length > 0) return `the plan uses dangerous tools: ${dangerous.join(', ')}`;
  return undefined;
}

/**
 * Asks for an approval and waits for the decision. While it waits the workflow parks: it ends, holding no
 * worker, and the decision (or the timeout sweep) rewinds it to the park step (see tasks/unpark.ts).
 * Approved: returns the decider's modified action, if any. Denied: throws ApprovalDeniedError. The wait does
 * not count against the task's deadline.
 */
export async function passApprovalGate(deps: Deps, task: TaskSnapshot, request: ApprovalRequest): Promise<{ modifiedAction?: unknown }> {
  const ticket = await runTaskStep(deps, 'approval:request', () => requestApproval(deps, task, request));
  const decision = await awaitDecision(deps, task.id, ticket.approvalId);
  const decidedAtMs = await runTaskStep(deps, 'approval:decision', () => announceDecision(deps, task.id, ticket.approvalId, decision));
  task.deadlineMs += decidedAtMs - ticket.requestedAtMs;
  if (decision.status === 'denied') throw new ApprovalDeniedError(decision.feedback || request.reason);
  return decision.modifiedAction === null ? {} : { modifiedAction: decision.modifiedAction };
}

async function awaitDecision(deps: Deps, taskId: string, approvalId: string): Promise<ApprovalState> {
  for (;;) {
    const state = await runTaskStep(deps, 'approval:read', () => readApproval(deps.db, approvalId));
    if (state.cancelRequested) throw new TaskCancelledError('approval');
    if (state.status !== 'pending') return state;
    if (await runTaskStep(deps, 'approval:park', () => parkForApproval(deps, taskId, approvalId))) throw new TaskParkedError('approval');
  }
}

/**
 * Inserts the pending approval and announces it in one transaction. A re-run of the step after a crash that
 * followed the commit finds the approval it announced and returns that one instead of minting another.
 */
async function requestApproval(deps: Deps, task: TaskSnapshot, request: ApprovalRequest): Promise<ApprovalTicket> {
  const dedupeKey = `approval-requested:${currentStepId()}`;
  const ticket = await changeTask(deps, task.id, 'workflow', async (transaction) => {
    const earlier = await findAnnouncedApproval(transaction, task.id, dedupeKey);
    if (earlier) return { result: earlier };
    const approval = await transaction.insertInto('approvals').values({
      id: randomUUID(), task_id: task.id, tenant_id: task.tenantId, user_id: task.userId, status: 'pending',
      reason: request.reason, action: JSON.stringify(request.action ?? null),
      expires_at: sql<Date>`now() + make_interval(secs => ${deps.config.approvals.timeoutSeconds})`,
    }).returning(['id', 'created_at', 'expires_at']).executeTakeFirstOrThrow();
    return {
      result: { approvalId: approval.id, requestedAtMs: approval.created_at.getTime() },
      events: [{
        type: 'APPROVAL_REQUESTED', agentId: 'orchestrator', dedupeKey,
        message: `Approval required: ${request.reason} (approval id ${approval.id})`,
        payload: { approval_id: approval.id, reason: request.reason, action: request.action ?? null, expires_at: approval.expires_at.toISOString() },
      }],
    };
  });
  return ticket!;
}

async function findAnnouncedApproval(transaction: Db, taskId: string, dedupeKey: string): Promise<ApprovalTicket | undefined> {
  const { rows } = await sql<{ id: string; created_at: Date }>`
    select a.id, a.created_at from task_events e join approvals a on a.id = (e.payload->>'approval_id')::uuid
    where e.task_id = ${taskId} and e.dedupe_key = ${dedupeKey}`.execute(transaction);
  return rows[0] && { approvalId: rows[0].id, requestedAtMs: rows[0].created_at.getTime() };
}

async function readApproval(db: Db, approvalId: string): Promise<ApprovalState> {
  const row = await db.selectFrom('approvals').innerJoin('tasks', 'tasks.id', 'approvals.task_id')
    .select(['approvals.status', 'approvals.feedback', 'approvals.modified_action', 'approvals.decided_by', 'tasks.cancel_requested'])
    .where('approvals.id', '=', approvalId).executeTakeFirstOrThrow();
  return {
    status: row.status, feedback: row.feedback, modifiedAction: row.modified_action,
    decidedBy: row.decided_by, cancelRequested: row.cancel_requested,
  };
}

/**
 * Marks the task parked at this step, unless the approval was decided or a cancel came in meanwhile (both
 * take the task row too, so one of the two sees the other). True when the workflow is to end here.
 */
async function parkForApproval(deps: Deps, taskId: string, approvalId: string): Promise<boolean> {
  const step = currentStepId();
  const parked = await changeTask(deps, taskId, 'workflow', async (transaction, task) => {
    if (task.cancel_requested) return { result: false };
    const approval = await transaction.selectFrom('approvals').select('status').where('id', '=', approvalId).executeTakeFirstOrThrow();
    if (approval.status !== 'pending') return { result: false };
    await transaction.updateTable('tasks').set({ parked_at_step: step }).where('id', '=', taskId).execute();
    return { result: true };
  });
  return parked === true;
}

async function announceDecision(deps: Deps, taskId: string, approvalId: string, decision: ApprovalState): Promise<number> {
  const approved = decision.status === 'approved';
  await appendEvents(deps, taskId, 'workflow', [{
    type: 'APPROVAL_DECISION', agentId: 'orchestrator', dedupeKey: `approval-decision:${approvalId}`,
    message: `Approval ${approved ? 'approved' : 'denied'}${decision.feedback ? `: ${decision.feedback}` : ''}`,
    payload: { approval_id: approvalId, approved, feedback: decision.feedback, decided_by: decision.decidedBy },
  }]);
  return Date.now();
}
