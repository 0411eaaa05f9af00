import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { TaskRow } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { changeTask } from '../task-state/change-task.ts';
import { ensureOwned } from '../auth/ownership.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { unparkReleasedTask } from '../tasks/unpark.ts';
import { findTenantApproval, recordDecision } from './queries.ts';
import type { DecisionBody } from './schemas.ts';

type DecisionInput = Static<typeof DecisionBody>;

/**
 * POST /api/v1/approvals/decision (spec 4.4): records the owner's decision under the task's row lock, then
 * wakes the task if it parked to wait for it. The workflow announces the decision (APPROVAL_DECISION) when
 * it reads it.
 */
export async function decideApproval(deps: Deps, caller: Caller, input: DecisionInput) {
  await changeTask(deps, input.workflow_id, 'request', async (transaction, task) => {
    await ensureDecidable(transaction, caller, ownedTask(caller, task), input.approval_id);
    await recordDecision(transaction, input.approval_id, {
      approved: input.approved, feedback: input.feedback ?? null,
      modifiedAction: input.modified_action, decidedBy: input.approved_by ?? caller.userId,
    });
    return undefined;
  });
  await unparkReleasedTask(deps, input.workflow_id);
  return {
    status: 'sent',
    success: true,
    message: `Approval ${input.approved ? 'approved' : 'denied'}`,
    workflow_id: input.workflow_id,
    run_id: input.run_id ?? input.workflow_id,
    approval_id: input.approval_id,
  };
}

/** Another tenant's task does not exist for the caller; another user's is forbidden (as for every task route). */
function ownedTask(caller: Caller, task: TaskRow): TaskRow {
  if (task.tenant_id !== caller.tenantId) throw notFound('Task not found');
  return ensureOwned(task, caller);
}

async function ensureDecidable(transaction: Db, caller: Caller, task: TaskRow, approvalId: string): Promise<void> {
  const approval = await findTenantApproval(transaction, caller, approvalId);
  if (!approval) throw notFound('Approval not found');
  if (approval.task_id !== task.id) throw badRequest(`approval ${approvalId} does not belong to workflow ${task.id}`);
  if (approval.status !== 'pending') throw conflict(`approval is already ${approval.status}`);
  if (isTerminal(task.status)) throw conflict('the task is no longer waiting for this approval');
}
