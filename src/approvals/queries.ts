import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { ApprovalStatus } from '../db/schema.ts';

export interface Decision {
  approved: boolean;
  feedback: string | null;
  modifiedAction: unknown;
  decidedBy: string;
}

export type ApprovalStatusFilter = ApprovalStatus | 'all';

/** An approval of the caller's tenant; another tenant's does not exist for the caller. */
export function findTenantApproval(db: Db, caller: Caller, approvalId: string) {
  return db.selectFrom('approvals').select(['id', 'task_id', 'status'])
    .where('id', '=', approvalId).where('tenant_id', '=', caller.tenantId).executeTakeFirst();
}

/** Run under the task's row lock (see migration 0016); only a pending approval is decided. */
export async function recordDecision(transaction: Db, approvalId: string, decision: Decision): Promise<void> {
  await transaction.updateTable('approvals').set({
    status: decision.approved ? 'approved' : 'denied',
    feedback: decision.feedback,
    modified_action: decision.modifiedAction === undefined ? null : JSON.stringify(decision.modifiedAction),
    decided_by: decision.decidedBy,
    decided_at: sql`now()` as never,
  }).where('id', '=', approvalId).where('status', '=', 'pending').execute();
}

export function listOwnApprovals(db: Db, caller: Caller, filter: { status: ApprovalStatusFilter; limit: number; offset: number }) {
  return ownApprovals(db, caller, filter.status).selectAll()
    .orderBy('created_at', 'desc').orderBy('id', 'desc')
    .limit(filter.limit).offset(filter.offset).execute();
}

export async function countOwnApprovals(db: Db, caller: Caller, status: ApprovalStatusFilter): Promise<number> {
  const row = await ownApprovals(db, caller, status).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

function ownApprovals(db: Db, caller: Caller, status: ApprovalStatusFilter) {
  const query = db.selectFrom('approvals').where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId);
  return status === 'all' ? query : query.where('status', '=', status);
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
