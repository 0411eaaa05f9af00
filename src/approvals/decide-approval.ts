import type { Static } from 'typebox';
import { recordAudit } from '../auth/audit.ts';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { approvalSignal, deliverSignal } from '../task-state/waits.ts';
import { approvalViewer } from './approval-viewer.ts';
import { findVisibleApproval, readApprovalStatus, recordDecision } from './queries.ts';
import type { DecisionBody } from './schemas.ts';

type DecisionInput = Static<typeof DecisionBody>;
type VisibleApproval = NonNullable<Awaited<ReturnType<typeof findVisibleApproval>>>;

/** The one answer for an approval the caller may not see, whether it exists or not: no existence oracle. */
export const APPROVAL_NOT_FOUND = 'Approval not found';

/**
 * POST /api/v1/approvals/decision (spec 2.14, 4.4). The caller sees the approval as its requester or as an
 * approver of its tenant (APPROVAL_APPROVER_ROLES); any other pair of ids is the same 404. An approval that
 * needs another approver (dangerous tools, a policy rule) is approved only by an approver other than the
 * requester, who may still deny it. The decision is the authenticated caller's, recorded under the task's row
 * lock with an audit entry; `approved_by` is kept as a note. The decision is the signal the task waits for, and
 * wakes it; the workflow announces the decision (APPROVAL_DECISION) when it reads it.
 */
export async function decideApproval(deps: Deps, caller: Caller, input: DecisionInput) {
  const viewer = approvalViewer(deps.config, caller);
  const approval = await findVisibleApproval(deps.db, viewer, input.workflow_id, input.approval_id);
  if (!approval) throw notFound(APPROVAL_NOT_FOUND);
  ensureMayDecide(caller, approval, input.approved);
  await deliverSignal(deps, approval.task_id, approvalSignal(approval.id), async (transaction, task) => {
    await ensurePending(transaction, task, approval.id);
    await recordDecision(transaction, approval.id, {
      approved: input.approved, feedback: input.feedback ?? null, modifiedAction: input.modified_action,
      decidedBy: caller.userId, approvedByNote: input.approved_by ?? null,
    });
    await recordAudit(transaction, {
      type: 'approval_decided', userId: caller.userId, tenantId: caller.tenantId,
      details: { approval_id: approval.id, task_id: approval.task_id, approved: input.approved, approved_by_note: input.approved_by ?? null },
    });
    return undefined;
  });
  return {
    status: 'sent',
    success: true,
    message: `Approval ${input.approved ? 'approved' : 'denied'}`,
    workflow_id: input.workflow_id,
    run_id: input.run_id ?? input.workflow_id,
    approval_id: input.approval_id,
  };
}

/**
 * Four eyes for what guards dangerous tools: the requester may withdraw (deny) but not approve. Without
 * authentication (skip-auth development) there is one identity and no one else to ask.
 */
function ensureMayDecide(caller: Caller, approval: VisibleApproval, approved: boolean): void {
  if (!approved || !approval.needs_other_approver || caller.authMethod === 'development') return;
  if (approval.user_id === caller.userId) {
    throw forbidden('Forbidden: this approval guards dangerous tools; an approver other than the requester must approve it');
  }
}

async function ensurePending(transaction: Db, task: TaskRow, approvalId: string): Promise<void> {
  const status = await readApprovalStatus(transaction, approvalId);
  if (status !== 'pending') throw conflict(`approval is already ${status}`);
  if (isTerminal(task.status)) throw conflict('the task is no longer waiting for this approval');
}
