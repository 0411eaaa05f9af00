import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { toSkillResponse, toSkillSummary } from './skill-view.ts';

/** GET /skills (reference §8.1): the highest version of each skill by name, optionally of one category. */
export function listSkills(deps: Pick<Deps, 'skills'>, category: string | undefined) {
  const latest = deps.skills.latest();
  const skills = latest.filter((entry) => !category || entry.skill.category === category).map(toSkillSummary);
  const categories = [...new Set(latest.map((entry) => entry.skill.category).filter((name) => name !== ''))].sort();
  return { skills, count: skills.length, categories };
}

/** GET /skills/{name}: `name` is its highest version, `name@version` exactly that one. */
export function readSkill(deps: Pick<Deps, 'skills' | 'config'>, reference: string) {
  const entry = deps.skills.find(reference);
  if (!entry) throw notFound('Skill not found');
  return toSkillResponse(entry, deps.config.skills.path);
}

/** GET /skills/{name}/versions, highest first; a name with a version is not a skill's name, so 404 as in the reference. */
export function readSkillVersions(deps: Pick<Deps, 'skills'>, name: string) {
  const versions = deps.skills.versions(name);
  if (versions.length === 0) throw notFound('Skill not found');
  return { name, versions: versions.map(toSkillSummary), count: versions.length };
}
