import type { Deps } from '../deps.ts';
import { approvalSignal, deliverSignal } from '../task-state/waits.ts';
import { recordDecision, selectLapsedApprovals } from './queries.ts';

const BATCH = 500;

/**
 * Periodic: an approval left undecided past its expiry is denied with feedback `approval timeout` (reference
 * §3.2), and its task woken to fail with it. One whose task ended meanwhile (cancelled while it waited) is
 * closed too, so no list shows it pending.
 */
export async function expireApprovals(deps: Deps): Promise<void> {
  for (const approval of await selectLapsedApprovals(deps.db, BATCH)) {
    await deliverSignal(deps, approval.task_id, approvalSignal(approval.id), async (transaction) => {
      await recordDecision(transaction, approval.id, {
        approved: false, feedback: approval.expired ? 'approval timeout' : 'task ended', modifiedAction: undefined, decidedBy: 'system', approvedByNote: null,
      });
      return undefined;
    });
  }
}
