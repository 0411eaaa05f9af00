import type { Deps } from '../deps.ts';
import type { ConversationMessage } from '../llm/stream-model-text.ts';
import { runBudgetedAgent } from './budgeted-agent.ts';
import { checkpoint } from './checkpoint.ts';
import { prepareSessionContext, withConversationSummary } from './session-context.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import type { TaskOutcome } from './task-lifecycle.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

export const SIMPLE_AGENT_ID = 'simple-agent';

/** One agent answers with the session's history (summarised when long) and the task's system prompt. */
export async function runSimpleWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  await checkpoint(deps, task, 'pre_execution');
  const system = buildSystemPrompt(task.context);
  // An OpenAI-layer request carries its own conversation; native tasks use the session's history.
  const conversation = task.context.conversation_history;
  const history = Array.isArray(conversation)
    ? { messages: conversation as ConversationMessage[], summary: null }
    : await prepareSessionContext(deps, task, system);
  const answer = await runBudgetedAgent(deps, task, async () => ({
    agentId: SIMPLE_AGENT_ID,
    progress: 'Answering directly with one agent',
    finalAnswer: true,
    maxOutputTokens: typeof task.context.max_output_tokens === 'number' ? task.context.max_output_tokens : undefined,
    system: withConversationSummary(system, history.summary),
    messages: [...history.messages, { role: 'user', content: task.query }],
  }), 'simple-agent');
  return { mode: 'simple', answer, agentsUsed: 1, complexityScore: null };
}
