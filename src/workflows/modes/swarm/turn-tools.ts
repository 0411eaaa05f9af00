import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { RequestedToolCall } from '../../../llm/stream-model-text.ts';
import { AGENT_TOOL_LIMITS, atMostOnceRows, callKeyOf, invokedEvent, runCall, toolOf, type CallRecord, type ToolUse } from '../../agent-calls/agent-tool-call.ts';
import { roleToolSet } from '../../agent-calls/role-tools.ts';
import { insertToolCallRows } from '../../agent-calls/tool-call-queries.ts';
import type { AgentAction } from './swarm-answers.ts';
import type { AgentView } from './swarm-prompts.ts';
import type { Turn } from './turn-context.ts';

/** A tool call the agent asked for and may make, run before the turn's commit, which records it (the tool loop's pieces). */
export interface ToolRun {
  record: CallRecord;
  invoked: NewTaskEvent;
}

export interface TurnTools {
  /** The tool a `tool_call` action asked for. */
  asked?: ToolRun;
  /** The findings of an agent going idle, written to the session workspace with file_write. */
  findingsFile?: ToolRun;
}

/** The tools a turn runs before its commit: the one the agent asked for, or file_write for the findings it leaves. */
export async function runTurnTools(turn: Turn, view: AgentView, action: AgentAction, cancel: AbortSignal): Promise<TurnTools> {
  const findings = findingsOf(view, action);
  if (findings !== undefined) {
    const path = `findings/${turn.agent.name}-${turn.agent.assignment ?? 'findings'}.md`;
    return { findingsFile: await runTool(turn, 'file_write', { path, content: `# ${view.task?.description ?? 'Findings'}\n\n${findings}\n` }, 1, cancel) };
  }
  if (action.action !== 'tool_call' || !action.tool || !view.tools.includes(action.tool)) return {};
  return { asked: await runTool(turn, action.tool, action.args ?? {}, 0, cancel) };
}

/**
 * Runs a tool as one call of the tool loop (the step's call `<stepKey>:c<index>`): a re-run of the step replays its
 * recorded outcome, and a tool acting outside the gateway has its at-most-once claim written first. The agent's
 * request runs through its role's tool set; the findings file through the registry's file_write, which the workflow
 * (not the model) calls. Undefined when the tenant has no such tool here.
 */
async function runTool(turn: Turn, name: string, input: Record<string, unknown>, index: number, cancel: AbortSignal): Promise<ToolRun | undefined> {
  const { deps, task, agent, stepKey } = turn;
  const tools = index === 0 ? roleToolSet(deps.tools, task.tenantId, agent.role) : roleToolSet(deps.tools, task.tenantId, agent.role, [name]);
  const use: ToolUse = {
    agentId: agent.name, role: agent.role, stepKey, tools,
    limits: { ...AGENT_TOOL_LIMITS, toolCalls: 1 }, executed: 0, outputChars: 0, consecutiveErrors: 0, nextIndex: index,
  };
  const tool = toolOf(use, name);
  if (!tool) return undefined;
  const key = callKeyOf(use, index);
  const request = { toolCallId: key, toolName: name, input } as RequestedToolCall;
  await insertToolCallRows(deps.db, await atMostOnceRows(deps, task, use, tool, request, key));
  return { record: await runCall(deps, task, use, request, key, cancel), invoked: invokedEvent(use, request, key) };
}

/** What an agent leaves when this turn ends its work: its key findings, or at its last turn what it has. */
export function findingsOf(view: AgentView, action: AgentAction): string | undefined {
  if (action.action === 'idle') return action.key_findings?.trim() || 'No findings.';
  return view.turn >= view.maxTurns ? `Stopped at the limit of ${view.maxTurns} turns. ${lastWords(view, action)}` : undefined;
}

/** What an agent stopped at the turn limit leaves: what it published, sent or last said. */
function lastWords(view: AgentView, action: AgentAction): string {
  return (action.data ?? action.message ?? action.key_findings ?? view.history.at(-1)?.result ?? '').slice(0, 2000);
}

