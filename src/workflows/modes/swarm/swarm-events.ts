import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { SwarmTask } from './swarm-queries.ts';

/** The lead's agent id in events (spec 6.2). */
export const LEAD_AGENT_ID = 'swarm-lead';

export const taskListEvent = (tasks: SwarmTask[], key: string): NewTaskEvent => ({
  type: 'TASKLIST_UPDATED', agentId: LEAD_AGENT_ID,
  message: `Task list: ${tasks.filter((task) => task.status === 'completed').length} of ${tasks.length} completed`,
  payload: { tasks }, dedupeKey: `${key}:tasklist`,
});

/** The mock provider's options for a swarm call: its purpose and the task's script (context.mock_swarm). */
export function swarmMock(context: Record<string, unknown>, purpose: 'swarm-lead' | 'swarm-agent', agent?: string): Record<string, unknown> {
  const script = (context.mock_swarm ?? {}) as Record<string, unknown>;
  const failing = Array.isArray(script.fail_agents) && agent !== undefined && script.fail_agents.includes(agent);
  return { purpose, script, ...(failing ? { fail: true } : {}) };
}
