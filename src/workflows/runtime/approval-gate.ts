import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { announceDecision, approvalWait, requestApproval, type ApprovalRequest } from './approval-records.ts';
import { ApprovalDeniedError } from './control-errors.ts';
import { waitForSignal } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

/**
 * Asks for an approval and waits for the decision (the approval's signal, runtime/durable-wait.ts), which a
 * decision or the timeout sweep delivers.
 * Approved: returns the decider's modified action, if any. Denied: throws ApprovalDeniedError. The wait does
 * not count against the task's deadline.
 */
export async function passApprovalGate(deps: Deps, task: TaskSnapshot, request: ApprovalRequest): Promise<{ modifiedAction?: unknown }> {
  const ticket = await runTaskStep(deps, 'approval:request', () => requestApproval(deps, task, request, `approval-requested:${currentStepId()}`));
  const decision = await waitForSignal(deps, task, { ...approvalWait(deps, ticket.approvalId), steps: { read: 'approval:read', park: 'approval:park' } });
  const decidedAtMs = await runTaskStep(deps, 'approval:decision', () => announceDecision(deps, task.id, ticket.approvalId, decision));
  task.deadlineMs += decidedAtMs - ticket.requestedAtMs;
  if (decision.status === 'denied') throw new ApprovalDeniedError(decision.feedback || request.reason);
  return decision.modifiedAction === null ? {} : { modifiedAction: decision.modifiedAction };
}
