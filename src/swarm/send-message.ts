import { randomUUID } from 'node:crypto';
import { ensureOwnedTask } from '../auth/ownership.ts';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, conflict } from '../errors.ts';
import { changeTask } from '../task-state/change-task.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { insertMessages, LEAD } from '../workflows/modes/swarm/swarm-queries.ts';
import { LEAD_AGENT_ID } from '../workflows/modes/swarm/swarm-events.ts';
import { MAX_SWARM_MESSAGE_BYTES } from './schemas.ts';

/** The sender of a human's message in the swarm's mailboxes. */
export const HUMAN_SENDER = 'user';

/**
 * POST /api/v1/swarm/{workflow_id}/message (reference §3.3): the owner's message for the lead, delivered durably (a row
 * of the lead's mailbox, which its next decision reads, whatever process runs it) and kept with the task's events
 * (MESSAGE_RECEIVED), so the session's history shows it. Under the task's row lock, so it cannot race the swarm's end:
 * a finished swarm is 409; another tenant's task 404, another user's 403.
 */
export async function sendSwarmMessage(deps: Deps, caller: Caller, taskId: string, message: string): Promise<{ success: true; status: 'sent' }> {
  const body = checkedMessage(message);
  await changeTask(deps, taskId, 'request', async (transaction, row) => {
    ensureOwnedTask(caller, row);
    if (row.context.force_swarm !== true) throw conflict('this task is not a swarm: send messages to tasks submitted with context.force_swarm');
    if (!deps.config.swarm.enabled) throw conflict('the swarm workflow is off in this deployment: the task runs without a lead to read messages');
    if (isTerminal(row.status)) throw conflict('the swarm has finished');
    await insertMessages(transaction, taskId, [{ id: `${HUMAN_SENDER}:${randomUUID()}`, sender: HUMAN_SENDER, recipient: LEAD, body, sentRound: null }]);
    return { events: [{ type: 'MESSAGE_RECEIVED', agentId: HUMAN_SENDER, message: body, payload: { from: HUMAN_SENDER, to: LEAD_AGENT_ID } }] };
  });
  return { success: true, status: 'sent' };
}

function checkedMessage(message: string): string {
  if (message.trim() === '') throw badRequest('message is required: what the lead should read');
  if (Buffer.byteLength(message, 'utf8') > MAX_SWARM_MESSAGE_BYTES) throw badRequest(`message is too long: at most ${MAX_SWARM_MESSAGE_BYTES} bytes`);
  return message;
}
