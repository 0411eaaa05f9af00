import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { announceDecision, parkForApproval, readApproval, requestApproval, type ApprovalRequest, type ApprovalState } from './approval-records.ts';
import { ApprovalDeniedError, TaskCancelledError, TaskParkedError } from './control-errors.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

/**
 * Asks for an approval and waits for the decision. While it waits the workflow parks: it ends, holding no
 * worker, and the decision (or the timeout sweep) rewinds it to the park step (see tasks/unpark.ts).
 * Approved: returns the decider's modified action, if any. Denied: throws ApprovalDeniedError. The wait does
 * not count against the task's deadline.
 */
export async function passApprovalGate(deps: Deps, task: TaskSnapshot, request: ApprovalRequest): Promise<{ modifiedAction?: unknown }> {
  const ticket = await runTaskStep(deps, 'approval:request', () => requestApproval(deps, task, request, `approval-requested:${currentStepId()}`));
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
