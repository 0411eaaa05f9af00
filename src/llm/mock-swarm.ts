import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider';

/**
 * The mock provider as a swarm partner (issue 28): offline, it answers the lead and the agents with valid decisions
 * derived from the state their prompts carry (workflows/modes/swarm/swarm-prompts.ts, as JSON under "## State").
 * The lead plans two or three tasks and spawns an agent for each; agents search the corpus, the first one messages a
 * teammate, each publishes what it found and goes idle with findings that cite the pages; the lead passes a human's
 * message on, reassigns what is left and ends when every task is done. `mock.script` (context.mock_swarm) scripts it:
 * `tasks` (descriptions), `agents` (how many to spawn), `search_turns` (searches per agent), `reply` (the lead's own
 * answer), `agent_tier` (the model tier agents are spawned with), `read_findings` (before closing, the lead reads the
 * agents' findings files and answers from them); `fail_agents` is read by the workflow (the mock's `fail`).
 */
export const SWARM_PURPOSES = ['swarm-lead', 'swarm-agent'] as const;

interface SwarmScript {
  tasks?: string[];
  agents?: number;
  search_turns?: number;
  reply?: string;
  agent_tier?: string;
  read_findings?: boolean;
}

const NAMES = ['ada', 'ben', 'cleo', 'dev', 'eve', 'finn', 'gus', 'hana', 'ivo', 'jun', 'kai', 'lia', 'max', 'nia', 'oto', 'pia'];

export function composeSwarmAnswer(options: LanguageModelV3CallOptions): string | undefined {
  const mock = options.providerOptions?.mock;
  const script = (mock?.script ?? {}) as SwarmScript;
  if (mock?.purpose === 'swarm-lead') return JSON.stringify(leadDecision(stateOf(options.prompt) as LeadState, script));
  if (mock?.purpose === 'swarm-agent') return JSON.stringify(agentAction(stateOf(options.prompt) as AgentState, script));
  return undefined;
}

interface LeadState {
  query: string;
  round: number;
  tasks: Array<{ id: string; description: string; status: string; owner: string | null; depends_on: string[] }>;
  agents: Array<{ name: string; status: string; assignment: string | null }>;
  humanMessages: string[];
  sessionFiles?: string[];
  filesRead?: Array<{ path: string; content?: string; error?: string }>;
  readsLeft?: number;
}

function leadDecision(state: LeadState, script: SwarmScript) {
  if (state.tasks.length === 0) return plan(state, script);
  const actions: Array<Record<string, unknown>> = [];
  const reasons: string[] = [];
  for (const message of state.humanMessages) {
    reasons.push(`The user wrote: "${message}". I pass it on to the team.`);
    actions.push({ type: 'broadcast', message: `From the user: ${message}` }, { type: 'interim_reply', message: `Noted: "${message.slice(0, 200)}". The team takes it into account.` });
  }
  const idle = state.agents.filter((agent) => agent.status === 'idle');
  const done = new Set(state.tasks.filter((task) => task.status === 'completed').map((task) => task.id));
  const open = state.tasks.filter((task) => task.status === 'pending' && task.depends_on.every((id) => done.has(id)));
  for (const [index, task] of open.entries()) {
    if (!idle[index]) break;
    actions.push({ type: 'assign_task', name: idle[index].name, task_id: task.id });
    reasons.push(`${task.id} goes to ${idle[index].name}.`);
  }
  const working = state.agents.some((agent) => agent.status === 'active');
  const finished = state.tasks.every((task) => task.status === 'completed' || task.status === 'cancelled');
  if (!working && actions.length === 0 && (finished || idle.length === 0)) {
    const findings = (state.sessionFiles ?? []).filter((path) => path.startsWith('findings/')).slice(0, 3);
    const read = state.filesRead ?? [];
    if (script.read_findings && read.length === 0 && findings.length > 0 && (state.readsLeft ?? 0) > 0) {
      return { reasoning: 'Reading the team\'s findings before answering.', actions: [{ type: 'file_read', paths: findings }] };
    }
    reasons.push(finished ? 'Every task is completed.' : 'Nobody is left to work on the rest.');
    const reply = script.read_findings && read.length > 0 ? answerFromFiles(read) : script.reply;
    if (read.length > 0) reasons.push(`I read ${read.map((file) => file.path).join(', ')}.`);
    actions.push({ type: 'done', ...(reply ? { reply } : {}) });
  }
  if (actions.length === 0) actions.push({ type: 'noop' });
  return { reasoning: reasons.join(' ') || `Round ${state.round}: the team is still working.`, actions };
}

function answerFromFiles(files: NonNullable<LeadState['filesRead']>): string {
  return ['What the team wrote down:', ...files.map((file) => `- ${file.path}: ${(file.content ?? file.error ?? '').replace(/\s+/g, ' ').slice(0, 300)}`)].join('\n');
}

function plan(state: LeadState, script: SwarmScript) {
  const descriptions = script.tasks ?? tasksFor(state.query);
  const tasks = descriptions.map((description, index) => ({ id: `T${index + 1}`, description, depends_on: [] }));
  const count = script.agents ?? tasks.length;
  const spawns = Array.from({ length: count }, (_, index) => ({
    type: 'spawn_agent', name: NAMES[index % NAMES.length] + (index >= NAMES.length ? String(index) : ''), role: 'research',
    ...(script.agent_tier ? { model_tier: script.agent_tier } : {}),
    ...(tasks[index] ? { task_id: tasks[index].id } : {}),
  }));
  return {
    reasoning: `Plan for "${state.query.slice(0, 200)}": ${tasks.length} tasks, ${count} agents.`,
    actions: [{ type: 'revise_plan', tasks }, ...spawns],
  };
}

/** Two or three parts of the request: its sentences or clauses, else two angles on it. */
function tasksFor(query: string): string[] {
  const parts = query.split(/(?<=[.!?;])\s+|,?\s+and\s+/i).map((part) => part.trim().replace(/[?.!;]+$/, '')).filter((part) => part.split(/\s+/).length >= 3);
  if (parts.length >= 2) return parts.slice(0, 3);
  const topic = query.trim().replace(/[?.!]+$/, '');
  return [`Find the main facts about ${topic}`, `Find how ${topic} came about and where it is used`];
}

interface AgentState {
  name: string;
  task: { id: string; description: string } | null;
  teammates: Array<{ name: string }>;
  tools: string[];
  history: Array<{ action: { action?: string }; result: string }>;
  inbox: Array<{ sender: string; body: string }>;
}

function agentAction(state: AgentState, script: SwarmScript) {
  const did = (action: string) => state.history.filter((turn) => turn.action?.action === action).length;
  const assignment = state.task?.description ?? 'the request';
  const searches = script.search_turns ?? 1;
  if (state.tools.includes('web_search') && did('tool_call') < searches) {
    const round = did('tool_call');
    return { action: 'tool_call', tool: 'web_search', args: { query: round === 0 ? assignment : `${assignment} (${round + 1})`, max_results: 3 }, reasoning: 'Searching for my task.' };
  }
  const hits = state.history.flatMap((turn) => hitsIn(turn.result));
  const found = hits.slice(0, 2).map((hit) => `${hit.title} (${hit.url})`).join('; ') || 'nothing in the corpus';
  const teammate = state.teammates.map((other) => other.name).sort()[0];
  const isFirst = teammate !== undefined && state.name < teammate;
  if (isFirst && did('send_message') === 0) {
    return { action: 'send_message', to: teammate, message: `${state.name} here: for ${state.task?.id ?? 'my task'} I found ${found}.` };
  }
  if (did('publish_data') === 0) return { action: 'publish_data', topic: state.task?.id ?? 'findings', data: `${assignment}: ${found}` };
  const heard = state.inbox.map((message) => ` ${message.sender} said: ${message.body}`).join('');
  return { action: 'idle', key_findings: `${found} — on ${assignment}.${heard}` };
}

/** Titles and urls in a tool's output as the agent read it back (JSON text, possibly cut). */
function hitsIn(result: string): Array<{ title: string; url: string }> {
  const urls = [...result.matchAll(/"url":"(https?:[^"]+)"/g)].map((match) => match[1]);
  const titles = [...result.matchAll(/"title":"([^"]*)"/g)].map((match) => match[1]);
  return urls.map((url, index) => ({ url, title: titles[index] ?? url }));
}

function stateOf(prompt: LanguageModelV3Prompt): unknown {
  const user = prompt.findLast((message) => message.role === 'user');
  const text = user === undefined ? '' : typeof user.content === 'string' ? user.content : user.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const start = text.indexOf('## State\n');
  try {
    return JSON.parse(start < 0 ? '{}' : text.slice(start + '## State\n'.length));
  } catch {
    return {};
  }
}
