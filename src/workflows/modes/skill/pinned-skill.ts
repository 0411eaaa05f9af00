/**
 * The skill a task runs, as its submission resolved it (skills/skill-request.ts), kept in the task's options: a
 * worker runs exactly this version and content, even when the file changed or is not on the worker's disk.
 */
export interface PinnedSkill {
  name: string;
  version: string;
  content_hash: string;
  /** The skill's markdown body: the agent's instructions (`${name}` placeholders filled from `context.prompt_params`). */
  instructions: string;
}

export function pinnedSkillOf(value: unknown): PinnedSkill | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const candidate = value as Record<string, unknown>;
  const isText = (key: string) => typeof candidate[key] === 'string';
  return ['name', 'version', 'content_hash', 'instructions'].every(isText) ? candidate as unknown as PinnedSkill : undefined;
}
