import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import { toolNeedsApproval } from './approval-need.ts';
import { announceDecision, approvalWait, findAnnouncedApproval, requestApproval, type ApprovalTicket } from './approval-records.ts';
import { waitForSignal } from './durable-wait.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

export interface GatedToolCall {
  agentId: string;
  tool: string;
  input: unknown;
  /** The call's key in its agent's loop (`<stepKey>:c<n>`): stable when the agent's step runs again. */
  callKey: string;
}

/**
 * The tool loop's gate (issue 25, scope 5), inside the agent's durable step, before anything of the call runs.
 * A call to a tool that needs approval runs once an approval of the task names that tool; the plan's approval
 * names every such tool the agents are offered, so this asks only for what it did not cover (approvals turned
 * on while the task ran, a tool that joined the registry since, an approval given before approvals named
 * tools). Such a call asks for an approval of its own and the task parks at the agent's step; the decision
 * rewinds the workflow to that step, and its re-run comes back here and reads the decision. Denied (or
 * expired): the call is refused with the reason, and the agent goes on without it.
 */
export async function gateToolCall(deps: Deps, task: TaskSnapshot, call: GatedToolCall): Promise<{ refusal?: string }> {
  if (!toolNeedsApproval(deps, call.tool)) return {};
  const dedupeKey = `approval-requested:${call.callKey}`;
  const own = await findAnnouncedApproval(deps.db, task.id, dedupeKey);
  if (!own && await isToolApproved(deps.db, task.id, call.tool)) return {};
  const reason = `agent ${call.agentId} calls ${call.tool}, which no approval of this task covers`;
  const ticket = own ?? await requestApproval(deps, task, {
    reason, action: { tool: call.tool, args: call.input ?? null }, tools: [call.tool], needsOtherApprover: true, callKey: call.callKey,
  }, dedupeKey);
  return awaitCallDecision(deps, task, ticket, reason);
}

/** The wait runs inside the agent's step: parked, the task resumes at that step, whose re-run comes back here. */
async function awaitCallDecision(deps: Deps, task: TaskSnapshot, ticket: ApprovalTicket, reason: string): Promise<{ refusal?: string }> {
  const state = await waitForSignal(deps, task, approvalWait(deps, ticket.approvalId));
  await announceDecision(deps, task.id, ticket.approvalId, state);
  return state.status === 'approved' ? {} : { refusal: `approval denied: ${state.feedback || reason}` };
}

async function isToolApproved(db: Db, taskId: string, tool: string): Promise<boolean> {
  const row = await db.selectFrom('approvals').select('id')
    .where('task_id', '=', taskId).where('status', '=', 'approved').where((eb) => eb(eb.val(tool), '=', eb.fn.any('tools')))
    .limit(1).executeTakeFirst();
  return row !== undefined;
}
