import type { Deps } from '../../deps.ts';
import { runBudgetedAgent } from '../agent-calls/budgeted-agent.ts';
import type { AgentCall } from '../agent-calls/call-agent.ts';
import { passApprovalGate } from '../runtime/approval-gate.ts';
import { approvalNeed } from '../runtime/approval-need.ts';
import { checkpoint } from '../runtime/checkpoint.ts';
import { prepareSessionContext, withConversationSummary, type SessionContext } from '../memory/session-context.ts';
import { buildSystemPrompt } from '../agent-calls/system-prompt.ts';
import type { TaskOutcome } from '../runtime/task-lifecycle.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { clientTurnCall, clientTurnMetadata } from './client-turn.ts';

export const SIMPLE_AGENT_ID = 'simple-agent';

/**
 * `mode: simple`. Without a plan (and without tools) only the task's own request for approval counts, so the
 * gate decides the same on every replay.
 */
export async function runSimpleMode(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const need = approvalNeed(deps, task, { complexityScore: null, offeredTools: [] });
  if (need) await passApprovalGate(deps, task, { ...need, action: { query: task.query } });
  return runSimpleWorkflow(deps, task);
}

/** One agent answers with the session's history (summarised when long) and the task's system prompt. */
export async function runSimpleWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  await checkpoint(deps, task, 'pre_execution');
  const system = buildSystemPrompt(task.settings);
  const history = ownConversation(task) ?? await prepareSessionContext(deps, task, system);
  const answer = await runBudgetedAgent(deps, task, async () => simpleAgentCall(task, system, history), 'simple-agent');
  return simpleOutcome(answer, task);
}

/** An OpenAI-layer request carries its own conversation; native tasks use the session's history. */
export function ownConversation(task: TaskSnapshot): SessionContext | undefined {
  const conversation = task.settings.conversation;
  return conversation ? { messages: conversation, summary: null } : undefined;
}

export function simpleAgentCall(task: TaskSnapshot, system: string, history: SessionContext): AgentCall {
  return clientTurnCall(task, {
    agentId: SIMPLE_AGENT_ID,
    progress: 'Answering directly with one agent',
    finalAnswer: true,
    maxOutputTokens: task.settings.maxOutputTokens,
    system: withConversationSummary(system, history.summary),
    messages: [...history.messages, { role: 'user', content: task.query }],
  });
}

/** The task's outcome; an OpenAI-layer direct turn adds the tool calls made, or fails here for a wrong JSON answer. */
export function simpleOutcome(answer: TaskOutcome['answer'], task: TaskSnapshot): TaskOutcome {
  const metadata = clientTurnMetadata(task, answer);
  return { mode: 'simple', answer, agentsUsed: 1, complexityScore: null, ...(metadata ? { metadata } : {}) };
}
