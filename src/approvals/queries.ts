import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { ApprovalStatus } from '../db/schema.ts';
import type { ApprovalViewer } from './approval-viewer.ts';
import { addToolApprovalWait } from '../task-state/waits.ts';

export interface Decision {
  approved: boolean;
  feedback: string | null;
  modifiedAction: unknown;
  /** The deciding user's id, or `system` for an expiry. */
  decidedBy: string;
  /** What the client sent as `approved_by`. */
  approvedByNote: string | null;
}

export type ApprovalStatusFilter = ApprovalStatus | 'all';

/** The approval of this task the viewer may see; any other (unknown, another tenant's or user's) is not there for them. */
export function findVisibleApproval(db: Db, viewer: ApprovalViewer, taskId: string, approvalId: string) {
  return visibleApprovals(db, viewer).select(['id', 'task_id', 'user_id', 'status', 'needs_other_approver'])
    .where('id', '=', approvalId).where('task_id', '=', taskId).executeTakeFirst();
}

export async function readApprovalStatus(transaction: Db, approvalId: string): Promise<ApprovalStatus> {
  const row = await transaction.selectFrom('approvals').select('status').where('id', '=', approvalId).executeTakeFirstOrThrow();
  return row.status;
}

/**
 * Run under the task's row lock (see migration 0016); only a pending approval is decided. The wait of an approval
 * a tool call asked for is added to the task's `approval_wait_ms`, which its deadline does not count.
 */
export async function recordDecision(transaction: Db, approvalId: string, decision: Decision): Promise<void> {
  const decided = await transaction.updateTable('approvals').set({
    status: decision.approved ? 'approved' : 'denied',
    feedback: decision.feedback,
    modified_action: decision.modifiedAction === undefined ? null : JSON.stringify(decision.modifiedAction),
    decided_by: decision.decidedBy,
    approved_by_note: decision.approvedByNote,
    decided_at: sql`now()` as never,
  }).where('id', '=', approvalId).where('status', '=', 'pending')
    .returning(['task_id', 'call_key', 'created_at', 'decided_at']).executeTakeFirst();
  if (decided?.call_key && decided.decided_at) {
    await addToolApprovalWait(transaction, decided.task_id, decided.decided_at.getTime() - decided.created_at.getTime());
  }
}

export function listVisibleApprovals(db: Db, viewer: ApprovalViewer, filter: { status: ApprovalStatusFilter; limit: number; offset: number }) {
  return visibleApprovals(db, viewer, filter.status).selectAll()
    .orderBy('created_at', 'desc').orderBy('id', 'desc')
    .limit(filter.limit).offset(filter.offset).execute();
}

export async function countVisibleApprovals(db: Db, viewer: ApprovalViewer, status: ApprovalStatusFilter): Promise<number> {
  const row = await visibleApprovals(db, viewer, status).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

function visibleApprovals(db: Db, viewer: ApprovalViewer, status: ApprovalStatusFilter = 'all') {
  const tenant = db.selectFrom('approvals').where('tenant_id', '=', viewer.caller.tenantId);
  const visible = viewer.isApprover ? tenant : tenant.where('user_id', '=', viewer.caller.userId);
  return status === 'all' ? visible : visible.where('status', '=', status);
}

/** Pending approvals past their expiry, or whose task ended without a decision (cancelled while it waited). */
export async function selectLapsedApprovals(db: Db, batch: number) {
  const { rows } = await sql<{ id: string; task_id: string; expired: boolean }>`
    select a.id, a.task_id, a.expires_at <= now() as expired
    from approvals a join tasks t on t.id = a.task_id
    where a.status = 'pending' and (a.expires_at <= now() or t.status in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'))
    order by a.expires_at limit ${batch}`.execute(db);
  return rows;
}
