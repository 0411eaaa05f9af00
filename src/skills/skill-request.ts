import { hasScope, isAdmin, type Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, forbidden } from '../errors.ts';
import { availableToolNames } from '../workflows/agent-calls/role-tools.ts';
import { DEFAULT_ROLE } from '../workflows/agent-calls/role-presets.ts';
import type { PinnedSkill } from '../workflows/modes/skill/pinned-skill.ts';
import type { Skill, SkillEntry } from './skill-file.ts';

export const DANGEROUS_SKILLS_SCOPE = 'skills:dangerous';

/** What a task asking for a skill runs with, decided at submission. */
export interface SkillRequest {
  /** Kept in the task's options: the run uses this content whatever the file says by then (the workflow reads nothing else). */
  pinned: PinnedSkill;
  /** The skill's `budget_max`: the task's token budget is at most this. */
  budgetMax: number | undefined;
}

/**
 * The skill a submission asks for (`skill`, or the deprecated `context.skill`; top level wins, spec 4.2 rule 3),
 * checked and applied to the context: its `requires_role` becomes `context.role`, `skill_version` names the version
 * resolved. 400 for an unknown or disabled skill, a setting it cannot run with, or a required tool the role does not
 * have here; 403 for a dangerous skill without an admin/owner role or the skills:dangerous scope (spec 5.9).
 */
export function applySkillRequest(deps: Pick<Deps, 'skills' | 'tools'>, caller: Caller, mode: string | undefined, context: Record<string, unknown>): SkillRequest | undefined {
  if (context.skill === undefined) return undefined;
  const reference = String(context.skill);
  const entry = deps.skills.find(reference);
  if (!entry) throw badRequest(`skill ${reference} not found`);
  const { skill } = entry;
  const label = `${skill.name}@${skill.version}`;
  refuseUnusableSkill(caller, label, skill);
  refuseCombinedSettings(label, mode, context);
  refuseOtherVersion(reference, skill, context);
  const role = roleFor(label, skill, context);
  refuseMissingTools(deps, caller, label, skill, role);
  if (skill.requiresRole !== null) context.role = skill.requiresRole;
  context.skill_version = skill.version;
  return { pinned: pinnedSkill(entry), budgetMax: skill.budgetMax ?? undefined };
}

function refuseUnusableSkill(caller: Caller, label: string, skill: Skill): void {
  if (!skill.enabled) throw badRequest(`skill ${label} is disabled`);
  if (skill.dangerous && !isAdmin(caller) && !hasScope(caller, DANGEROUS_SKILLS_SCOPE)) {
    throw forbidden(`Forbidden: skill ${label} is dangerous; running it needs an admin or owner role or the ${DANGEROUS_SKILLS_SCOPE} scope`);
  }
}

/** The server records the version it resolved in `context.skill_version`; a client's own value may only agree with it. */
function refuseOtherVersion(reference: string, skill: Skill, context: Record<string, unknown>): void {
  if (context.skill_version === undefined || context.skill_version === skill.version) return;
  throw badRequest(`context.skill_version ${String(context.skill_version)} is not the version skill ${reference} resolves to (${skill.version}): ask for name@version in skill`);
}

/** A skill is one agent with the skill's instructions: settings that choose another workflow or other instructions cannot join it. */
function refuseCombinedSettings(label: string, mode: string | undefined, context: Record<string, unknown>): void {
  const others: Array<[string, boolean]> = [
    ['mode', mode !== undefined],
    ['context.system_prompt', context.system_prompt !== undefined],
    ['context.template', context.template !== undefined],
    ['context.force_research', context.force_research === true],
    ['context.force_swarm', context.force_swarm === true],
    ['context.agent', context.agent !== undefined],
  ];
  const combined = others.filter(([, isSet]) => isSet).map(([name]) => name);
  if (combined.length > 0) throw badRequest(`skill ${label} runs as one agent with the skill's instructions; it cannot be combined with ${combined.join(', ')}`);
}

/** The skill's role, else the task's, else the default; a task naming another role than the skill's is refused. */
function roleFor(label: string, skill: Skill, context: Record<string, unknown>): string {
  const asked = typeof context.role === 'string' ? context.role : undefined;
  if (skill.requiresRole !== null && asked !== undefined && asked !== skill.requiresRole) {
    throw badRequest(`skill ${label} runs as role ${skill.requiresRole}; context.role ${asked} cannot replace it`);
  }
  return skill.requiresRole ?? asked ?? DEFAULT_ROLE;
}

function refuseMissingTools(deps: Pick<Deps, 'tools'>, caller: Caller, label: string, skill: Skill, role: string): void {
  const available = availableToolNames(deps.tools, caller.tenantId, role);
  const missing = skill.requiresTools.filter((tool) => !available.includes(tool));
  if (missing.length > 0) throw badRequest(`skill ${label} requires tools that role ${role} does not have here: ${missing.join(', ')}`);
}

function pinnedSkill({ skill, contentHash }: SkillEntry): PinnedSkill {
  return { name: skill.name, version: skill.version, content_hash: contentHash, instructions: skill.content };
}
