import type { Deps } from '../../deps.ts';
import { requestSessionTitle } from './session-titles.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';

/**
 * The last step of a task run step by step: asks the titler (session-titles.ts) to name the session.
 * Tasks completed since issue 13 asked already in their completing transaction; this step stays for workflows
 * started before, whose recorded steps name it, and asks for them.
 */
export async function titleSession(deps: Deps, task: TaskSnapshot): Promise<void> {
  await runTaskStep(deps, 'session-title', () => requestSessionTitle(deps.db, task));
  deps.titles.nudge();
}
