import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';
import type { ToolRegistry } from '../../../tools/registry.ts';
import { parseAgentFile, type AgentDefinition } from './agent-file.ts';

const AvatarPresets = Type.Object({
  presets: Type.Array(Type.Object({
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
    name: Type.String({ minLength: 1 }),
    url: Type.String({ pattern: '^(https?://|/)' }),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

export type AvatarPreset = Static<typeof AvatarPresets>['presets'][number];

/** The single-purpose agents of this deployment (config/agents), read once at start-up. */
export interface AgentCatalogue {
  find(id: string): AgentDefinition | undefined;
  /** Sorted by id. */
  list(): AgentDefinition[];
  avatarPresets: AvatarPreset[];
}

/**
 * Reads every `*.yaml` of the directory and the avatar presets. An invalid file, or one id used twice, stops
 * start-up with every problem listed under the file it is in (as for templates).
 */
export function loadAgentCatalogue(directory: string, avatarsPath: string, tools: Pick<ToolRegistry, 'get'>): AgentCatalogue {
  if (!existsSync(directory)) throw new Error(`agents directory ${directory} does not exist (set AGENTS_DIR)`);
  const agents: AgentDefinition[] = [];
  const invalid: string[] = [];
  for (const file of agentFiles(directory)) {
    const checked = parseAgentFile(file, readFileSync(file, 'utf8'), tools);
    if ('agent' in checked) agents.push(checked.agent);
    else invalid.push(`invalid agent file ${file}:\n  ${checked.problems.join('\n  ')}`);
  }
  if (invalid.length > 0) throw new Error(invalid.join('\n'));
  return createAgentCatalogue(agents, loadAvatarPresets(avatarsPath));
}

function agentFiles(directory: string): string[] {
  return readdirSync(directory, { encoding: 'utf8' }).filter((entry) => /\.ya?ml$/i.test(entry)).sort().map((entry) => path.join(directory, entry));
}

function loadAvatarPresets(file: string): AvatarPreset[] {
  if (!existsSync(file)) return [];
  const data: unknown = parse(readFileSync(file, 'utf8'));
  const problems = Value.Errors(AvatarPresets, data).map((problem) => `${problem.instancePath || '/'}: ${problem.message}`);
  if (problems.length > 0) throw new Error(`invalid avatar presets file ${file}:\n  ${[...new Set(problems)].join('\n  ')}`);
  return (data as Static<typeof AvatarPresets>).presets;
}

export function createAgentCatalogue(agents: AgentDefinition[], avatarPresets: AvatarPreset[] = []): AgentCatalogue {
  const byId = new Map<string, AgentDefinition>();
  for (const agent of agents) {
    const other = byId.get(agent.id);
    if (other) throw new Error(`agent ${agent.id} is defined twice: in ${other.file} and ${agent.file}`);
    byId.set(agent.id, agent);
  }
  const sorted = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { find: (id) => byId.get(id), list: () => [...sorted], avatarPresets };
}
