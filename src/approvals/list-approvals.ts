import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { countOwnApprovals, listOwnApprovals } from './queries.ts';
import type { ListApprovalsQuery } from './schemas.ts';

type ApprovalRow = Awaited<ReturnType<typeof listOwnApprovals>>[number];

/** GET /api/v1/approvals: the caller's approvals across their tasks, newest first. */
export async function listApprovals(deps: Deps, caller: Caller, query: Static<typeof ListApprovalsQuery>) {
  const [rows, total] = await Promise.all([listOwnApprovals(deps.db, caller, query), countOwnApprovals(deps.db, caller, query.status)]);
  return { approvals: rows.map(toApprovalView), total };
}

function toApprovalView(row: ApprovalRow) {
  return {
    approval_id: row.id,
    workflow_id: row.task_id,
    status: row.status,
    reason: row.reason,
    action: row.action,
    modified_action: row.modified_action,
    feedback: row.feedback,
    decided_by: row.decided_by,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
  };
}
