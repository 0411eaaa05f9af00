import type { Deps } from '../deps.ts';
import { runBudgetedAgent } from './budgeted-agent.ts';
import { checkpoint } from './checkpoint.ts';
import { loadSessionHistory } from './session-history.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import type { TaskOutcome } from './task-lifecycle.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

export const SIMPLE_AGENT_ID = 'simple-agent';

/** One agent answers with the session's recent history and the task's system prompt. */
export async function runSimpleWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  await checkpoint(deps, task, 'pre_execution');
  const answer = await runBudgetedAgent(deps, task, async () => ({
    agentId: SIMPLE_AGENT_ID,
    progress: 'Answering directly with one agent',
    system: buildSystemPrompt(task.context),
    messages: [...await loadSessionHistory(deps.db, task), { role: 'user', content: task.query }],
  }), 'simple-agent');
  return { mode: 'simple', answer, agentsUsed: 1, complexityScore: null };
}
