import type { LeadFile } from './lead-files.ts';
import type { RecordedTurn, SwarmAgent, SwarmMessage, SwarmTask, WorkspaceEntry } from './swarm-queries.ts';

export interface SwarmPrompt {
  system: string;
  user: string;
}

/** The heading of the state both prompts carry as JSON (the mock partner, llm/mock-swarm.ts, reads it back). */
export const STATE_HEADING = '## State';

/** What the lead sees when it decides. */
export interface LeadView {
  query: string;
  round: number;
  /** Why the lead was woken: agents that went idle or failed, a human message, the periodic checkpoint. */
  wokenBy: string[];
  tasks: SwarmTask[];
  agents: Array<Pick<SwarmAgent, 'name' | 'role' | 'status' | 'assignment' | 'findings' | 'error'>>;
  humanMessages: string[];
  inbox: Array<Pick<SwarmMessage, 'sender' | 'body'>>;
  workspace: WorkspaceEntry[];
  /** Paths in the session workspace (the agents' findings files among them). */
  sessionFiles: string[];
  /** Files read with file_read for this decision. */
  filesRead: LeadFile[];
  /** file_read calls left for this decision. */
  readsLeft: number;
  roles: string[];
  maxAgents: number;
}

export function leadPrompt(view: LeadView): SwarmPrompt {
  return {
    system: [
      'You lead a team of agents that work in rounds on the user\'s request. Keep a task list (tasks T1, T2, ... with',
      'depends_on), spawn agents (a unique lowercase name, a role, a task), assign and reassign tasks, message agents,',
      'and end the work with `done` once every task is completed (give `reply` only when you answer the user yourself).',
      `Actions: revise_plan {tasks, cancel}, spawn_agent {name, role, task_id, model_tier?}, assign_task {name, task_id},`,
      'send_message {to, message}, broadcast {message}, shutdown_agent {name}, interim_reply {message} (tells the user',
      'something while the team works), file_read {paths} (up to 3 files of sessionFiles; you then decide again with',
      'them in filesRead, while readsLeft > 0), noop, done {reply?}.',
      `At most ${view.maxAgents} agents. Roles: ${view.roles.join(', ')}. A message from the user comes first: answer it in`,
      'your reasoning and act on it. Answer with JSON only: {"reasoning": "...", "actions": [...]}.',
    ].join(' '),
    user: `Request: ${view.query}\n\n${STATE_HEADING}\n${JSON.stringify(view)}`,
  };
}

/** What an agent sees on its turn. */
export interface AgentView {
  query: string;
  name: string;
  role: string;
  round: number;
  turn: number;
  maxTurns: number;
  task: Pick<SwarmTask, 'id' | 'description'> | null;
  teammates: Array<Pick<SwarmAgent, 'name' | 'role' | 'assignment'>>;
  tools: string[];
  history: Array<{ round: number; action: unknown; result: string }>;
  inbox: Array<Pick<SwarmMessage, 'id' | 'sender' | 'body'>>;
  workspace: WorkspaceEntry[];
  messagesLeft: number;
}

export function agentPrompt(view: AgentView): SwarmPrompt {
  return {
    system: [
      `You are ${view.name}, a ${view.role} agent in a team led by the lead. Each turn you take one action:`,
      'tool_call {tool, args} runs one of your tools; publish_data {topic, data} shares a finding with the team;',
      'send_message {to, message} writes to a teammate or to "lead"; idle {key_findings} ends your task with what you',
      `found (cite the sources). You have ${view.maxTurns - view.turn + 1} turns left. Answer with JSON only.`,
    ].join(' '),
    user: `Request: ${view.query}\n\n${STATE_HEADING}\n${JSON.stringify(view)}`,
  };
}

/** A turn as the agent reads it back: its action and what came of it (a tool's output cut to `chars`). */
export function historyEntry(turn: RecordedTurn, chars: number): { round: number; action: unknown; result: string } {
  const output = turn.toolError !== null ? `error: ${turn.toolError}` : turn.toolOutput === null || turn.toolOutput === undefined ? '' : JSON.stringify(turn.toolOutput);
  return { round: turn.round, action: turn.action, result: [turn.result, output.slice(0, chars)].filter(Boolean).join(' ') };
}

/** A workspace entry as shown: its content cut to the snippet length (spec 8: workspace_snippet_chars). */
export const snippetOf = (entry: WorkspaceEntry, chars: number): WorkspaceEntry => ({ ...entry, content: entry.content.slice(0, chars) });
