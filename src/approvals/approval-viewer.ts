import type { Caller } from '../auth/caller.ts';
import type { Config } from '../config.ts';

/** Who looks at approvals: an approver (APPROVAL_APPROVER_ROLES) sees the tenant's, anyone else only their own. */
export interface ApprovalViewer {
  caller: Caller;
  isApprover: boolean;
}

export function approvalViewer(config: Readonly<Config>, caller: Caller): ApprovalViewer {
  return { caller, isApprover: config.approvals.approverRoles.includes(caller.role) };
}
