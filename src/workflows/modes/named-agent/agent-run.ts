import type { Deps } from '../../../deps.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import type { AgentDefinition } from './agent-file.ts';

/** One call of the agent's tool: its arguments and output (with what a vision step saw), or why it failed. */
export type ToolResult =
  | { ok: true; args: Record<string, unknown>; output: unknown }
  | { ok: false; args: Record<string, unknown>; error: string };

/** What the agent's tool step records, with the catalogue entry it ran: the later steps of a replay use that one. */
export type AgentRun = { ok: true; agent: AgentDefinition; results: ToolResult[] } | { ok: false; error: string };

/** Reports the agent's failure (ERROR_OCCURRED under its id); the task then fails with the error. */
export async function agentFailed(deps: Deps, task: TaskSnapshot, stepKey: string, agentId: string, error: string): Promise<AgentRun> {
  await appendEvents(deps, task.id, 'workflow', [{
    type: 'ERROR_OCCURRED', agentId, message: `Agent ${agentId} failed: ${error}`.slice(0, 1000),
    payload: { agent_id: agentId, error: error.slice(0, 1000) }, dedupeKey: `${stepKey}:failed`,
  }]);
  return { ok: false, error };
}
