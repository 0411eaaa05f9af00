/** Role presets (spec 2.3): the tools a role may use and the system prompt it starts from. */
export interface RolePreset {
  name: string;
  tools: 'all' | string[];
  systemPrompt: string;
}

const presets: RolePreset[] = [
  {
    name: 'generalist',
    tools: 'all',
    systemPrompt: 'You are a capable assistant. Answer the request directly and accurately; say so plainly when you are unsure.',
  },
  {
    name: 'analysis',
    tools: ['web_search', 'file_read'],
    systemPrompt: 'You are an analyst. Break the question into its parts, weigh the evidence for each, and finish with a clear conclusion.',
  },
  {
    name: 'research',
    tools: ['web_search', 'web_fetch', 'web_subpage_fetch', 'web_crawl'],
    systemPrompt: 'You are a researcher. Gather facts from reliable sources, cite where each claim comes from, and note what remains uncertain.',
  },
  {
    name: 'writer',
    tools: ['file_read'],
    systemPrompt: 'You are a writer. Produce clear, well-structured prose suited to the reader the request describes.',
  },
  {
    name: 'critic',
    tools: ['file_read'],
    systemPrompt: 'You are a critic. Find the weaknesses, errors and unstated assumptions in what you are given, and suggest concrete fixes.',
  },
  {
    name: 'developer',
    // Spec 2.3's list, with the workspace's search, edit and delete (the reference's developer searches files too).
    tools: ['file_read', 'file_write', 'file_list', 'file_search', 'file_edit', 'file_delete', 'bash', 'python_executor'],
    systemPrompt: 'You are a software engineer. Give working, minimal code and explain the decisions that are not obvious.',
  },
  {
    name: 'browser_use',
    tools: ['browser_navigate', 'browser_click', 'browser_type', 'browser_screenshot', 'browser_extract', 'web_search'],
    systemPrompt: 'You operate a web browser for the user. Plan each step, act, and report what you observed.',
  },
  {
    name: 'data_analytics',
    tools: ['file_read', 'python_executor'],
    systemPrompt: 'You are a data analyst. State the method, compute carefully, and present results with their caveats.',
  },
];

const presetsByName = new Map(presets.map((preset) => [preset.name, preset]));

export const DEFAULT_ROLE = 'generalist';

export function findRolePreset(name: string | undefined): RolePreset | undefined {
  return presetsByName.get(name ?? DEFAULT_ROLE);
}

export function roleNames(): string[] {
  return [...presetsByName.keys()];
}
