import path from 'node:path';
import type { Static } from 'typebox';
import type { SkillEntry } from './skill-file.ts';
import type { SkillDetail, SkillResponse, SkillSummary } from './schemas.ts';

export function toSkillSummary({ skill }: SkillEntry): Static<typeof SkillSummary> {
  return {
    name: skill.name, version: skill.version, category: skill.category, description: skill.description,
    requires_tools: skill.requiresTools, dangerous: skill.dangerous, enabled: skill.enabled,
  };
}

function toSkillDetail(entry: SkillEntry): Static<typeof SkillDetail> {
  const { skill } = entry;
  return {
    ...toSkillSummary(entry),
    author: skill.author, requires_role: skill.requiresRole, budget_max: skill.budgetMax, metadata: skill.metadata, content: skill.content,
  };
}

/** `source_path` is relative to the skills directory: clients learn which file it is, not the server's layout. */
export function toSkillResponse(entry: SkillEntry, skillsDirectory: string): Static<typeof SkillResponse> {
  return {
    skill: toSkillDetail(entry),
    metadata: {
      source_path: path.relative(skillsDirectory, entry.sourcePath),
      content_hash: entry.contentHash,
      loaded_at: entry.loadedAt.toISOString(),
    },
  };
}
