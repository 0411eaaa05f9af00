import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { approvalViewer } from './approval-viewer.ts';
import { countVisibleApprovals, listVisibleApprovals } from './queries.ts';
import type { ListApprovalsQuery } from './schemas.ts';

type ApprovalRow = Awaited<ReturnType<typeof listVisibleApprovals>>[number];

/**
 * GET /api/v1/approvals: newest first, the caller's own approvals, or for an approver (APPROVAL_APPROVER_ROLES)
 * every approval of their tenant, so that they can decide what other users' tasks wait for.
 */
export async function listApprovals(deps: Deps, caller: Caller, query: Static<typeof ListApprovalsQuery>) {
  const viewer = approvalViewer(deps.config, caller);
  const [rows, total] = await Promise.all([listVisibleApprovals(deps.db, viewer, query), countVisibleApprovals(deps.db, viewer, query.status)]);
  return { approvals: rows.map(toApprovalView), total };
}

function toApprovalView(row: ApprovalRow) {
  return {
    approval_id: row.id,
    workflow_id: row.task_id,
    requested_by: row.user_id,
    status: row.status,
    reason: row.reason,
    action: row.action,
    tools: row.tools,
    needs_other_approver: row.needs_other_approver,
    modified_action: row.modified_action,
    feedback: row.feedback,
    decided_by: row.decided_by,
    approved_by_note: row.approved_by_note,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
  };
}
