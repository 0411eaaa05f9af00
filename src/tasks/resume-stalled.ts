import type { Deps } from '../deps.ts';
import { findStalledWorkflows } from '../engine/stalled-workflows.ts';
import { handOverWorkflows } from './hand-over-workflows.ts';

/**
 * The net under every database failure a running workflow cannot wait out in place (issue 26): this process's own
 * workflows that stopped running go back on the task queue, as a dead worker's do, and resume from their recorded
 * steps with the same exactly-once guarantees. A workflow taken meanwhile by anyone is left alone.
 */
export async function resumeStalledWorkflows(deps: Deps, me: string): Promise<number> {
  const stalled = await findStalledWorkflows(deps.db, me);
  if (stalled.length === 0) return 0;
  return handOverWorkflows(deps, me, me, 'stalled', stalled);
}
