import type { Deps } from '../../deps.ts';
import { requestSessionTitle } from './session-titles.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';

/**
 * The last step of a task workflow started before issue 13 (one without a shape): asks the titler
 * (session-titles.ts) to name the session. Workflows started since ask in their completing transaction, and run
 * no such step.
 */
export async function titleSession(deps: Deps, task: TaskSnapshot): Promise<void> {
  await runTaskStep(deps, 'session-title', () => requestSessionTitle(deps.db, task));
  deps.titles.nudge(task);
}
