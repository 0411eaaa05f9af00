import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ApprovalStatus } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { appendEvents, changeTask } from '../../task-state/change-task.ts';
import { approvalSignal, openWait } from '../../task-state/waits.ts';
import type { ApprovalNeed } from './approval-need.ts';
import type { SignalWait } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

/** What is asked of the human: why, the action to approve, the tools it covers and who may decide. */
export interface ApprovalRequest extends ApprovalNeed {
  action: unknown;
  /** The tool call inside an agent's loop that asks, if one does. */
  callKey?: string;
}

export interface ApprovalTicket { approvalId: string; requestedAtMs: number }

export interface ApprovalState {
  status: ApprovalStatus;
  feedback: string | null;
  modifiedAction: unknown;
  decidedBy: string | null;
  approvedByNote: string | null;
  cancelRequested: boolean;
}

/**
 * Inserts the pending approval, opens the task's wait for its decision and announces it in one transaction. A re-run after a crash that followed the
 * commit finds the approval announced under the same `dedupeKey` and returns that one instead of minting another.
 */
export async function requestApproval(deps: Deps, task: TaskSnapshot, request: ApprovalRequest, dedupeKey: string): Promise<ApprovalTicket> {
  const ticket = await changeTask(deps, task.id, 'workflow', async (transaction) => {
    const earlier = await findAnnouncedApproval(transaction, task.id, dedupeKey);
    if (earlier) return { result: earlier };
    const approval = await transaction.insertInto('approvals').values({
      id: randomUUID(), task_id: task.id, tenant_id: task.tenantId, user_id: task.userId, status: 'pending',
      reason: request.reason, action: JSON.stringify(request.action ?? null),
      tools: request.tools, needs_other_approver: request.needsOtherApprover, call_key: request.callKey ?? null,
      expires_at: sql<Date>`now() + make_interval(secs => ${deps.config.approvals.timeoutSeconds})`,
    }).returning(['id', 'created_at', 'expires_at']).executeTakeFirstOrThrow();
    await openWait(transaction, task.id, approvalSignal(approval.id));
    return {
      result: { approvalId: approval.id, requestedAtMs: approval.created_at.getTime() },
      events: [{
        type: 'APPROVAL_REQUESTED', agentId: 'orchestrator', dedupeKey,
        message: `Approval required: ${request.reason} (approval id ${approval.id})`,
        payload: {
          approval_id: approval.id, reason: request.reason, action: request.action ?? null, tools: request.tools,
          needs_other_approver: request.needsOtherApprover, expires_at: approval.expires_at.toISOString(),
        },
      }],
    };
  });
  return ticket!;
}

/** The approval announced under `dedupeKey`, if the task asked for one there. */
export async function findAnnouncedApproval(db: Db, taskId: string, dedupeKey: string): Promise<ApprovalTicket | undefined> {
  const { rows } = await sql<{ id: string; created_at: Date }>`
    select a.id, a.created_at from task_events e join approvals a on a.id = (e.payload->>'approval_id')::uuid
    where e.task_id = ${taskId} and e.dedupe_key = ${dedupeKey}`.execute(db);
  return rows[0] && { approvalId: rows[0].id, requestedAtMs: rows[0].created_at.getTime() };
}

export async function readApproval(db: Db, approvalId: string): Promise<ApprovalState> {
  const row = await db.selectFrom('approvals').innerJoin('tasks', 'tasks.id', 'approvals.task_id')
    .select(['approvals.status', 'approvals.feedback', 'approvals.modified_action', 'approvals.decided_by', 'approvals.approved_by_note', 'tasks.cancel_requested'])
    .where('approvals.id', '=', approvalId).executeTakeFirstOrThrow();
  return {
    status: row.status, feedback: row.feedback, modifiedAction: row.modified_action,
    decidedBy: row.decided_by, approvedByNote: row.approved_by_note, cancelRequested: row.cancel_requested,
  };
}

/** The wait for an approval's decision: it has come once the approval is no longer pending. */
export function approvalWait(deps: Deps, approvalId: string): SignalWait<ApprovalState> {
  return {
    signal: approvalSignal(approvalId), place: 'approval',
    read: () => readApproval(deps.db, approvalId),
    arrived: (state) => state.status !== 'pending',
    cancelled: (state) => state.cancelRequested,
  };
}

export async function announceDecision(deps: Deps, taskId: string, approvalId: string, decision: ApprovalState): Promise<number> {
  const approved = decision.status === 'approved';
  await appendEvents(deps, taskId, 'workflow', [{
    type: 'APPROVAL_DECISION', agentId: 'orchestrator', dedupeKey: `approval-decision:${approvalId}`,
    message: `Approval ${approved ? 'approved' : 'denied'}${decision.feedback ? `: ${decision.feedback}` : ''}`,
    payload: { approval_id: approvalId, approved, feedback: decision.feedback, decided_by: decision.decidedBy, approved_by_note: decision.approvedByNote },
  }]);
  return Date.now();
}
