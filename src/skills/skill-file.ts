import { createHash } from 'node:crypto';
import semver from 'semver';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { VFile } from 'vfile';
import { matter } from 'vfile-matter';
import { roleNames } from '../workflows/agent-calls/role-presets.ts';

/** As long as a client's own `context.system_prompt` may be (tasks/schemas.ts): a skill's content takes its place. */
export const MAX_SKILL_CONTENT_CHARACTERS = 100_000;

/** The front-matter header of a skill file (spec 2.12, reference §8.1). Unknown keys are refused, so a typo is not lost. */
const SkillHeader = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' }),
  version: Type.String({ minLength: 1, maxLength: 64 }),
  author: Type.Optional(Type.String({ maxLength: 200 })),
  category: Type.Optional(Type.String({ maxLength: 64 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  requires_role: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  requires_tools: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 50, uniqueItems: true })),
  budget_max: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  dangerous: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
}, { additionalProperties: false });

type SkillHeader = Static<typeof SkillHeader>;

/** A skill as the API shows it (spec 2.12): the header with its defaults filled, and the markdown body. */
export interface Skill {
  name: string;
  version: string;
  author: string | null;
  category: string;
  description: string;
  requiresTools: string[];
  requiresRole: string | null;
  budgetMax: number | null;
  dangerous: boolean;
  enabled: boolean;
  metadata: Record<string, unknown> | null;
  content: string;
}

/** One loaded version of a skill and where it came from. */
export interface SkillEntry {
  skill: Skill;
  sourcePath: string;
  /** SHA-256 of the whole file, hex (reference §8.1). */
  contentHash: string;
  loadedAt: Date;
}

export type ParsedSkillFile = { entry: SkillEntry } | { problems: string[] };

/** Reads a skill file's text: its header checked against the schema and the rules the schema cannot say. */
export function parseSkillFile(sourcePath: string, text: string, loadedAt: Date): ParsedSkillFile {
  const file = new VFile({ path: sourcePath, value: text.replace(/^\uFEFF/, '') });
  try {
    matter(file, { strip: true });
  } catch (error) {
    return { problems: [`the front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}`] };
  }
  const header: unknown = file.data.matter;
  if (!Value.Check(SkillHeader, header)) return { problems: headerProblems(header) };
  const content = String(file.value).trim();
  const problems = ruleProblems(header, content);
  if (problems.length > 0) return { problems };
  return { entry: { skill: skillOf(header, content), sourcePath, contentHash: sha256(text), loadedAt } };
}

function headerProblems(header: unknown): string[] {
  if (typeof header !== 'object' || header === null || Array.isArray(header) || Object.keys(header).length === 0) {
    return ['no front-matter header: the file must start with a `---` block giving at least name and version'];
  }
  const unknown = Object.keys(header).filter((key) => !(key in SkillHeader.properties));
  const problems = Value.Errors(SkillHeader, header)
    .map((error) => ({ key: error.instancePath.split('/')[1] ?? '', message: error.message }))
    // Unknown keys are named once below rather than by each error the schema reports for them.
    .filter(({ key }) => key !== '' && !unknown.includes(key))
    .map(({ key, message }) => `${key}: ${message}${key === 'version' ? ' (a semantic version such as 1.0.0)' : ''}`);
  if (unknown.length > 0) problems.push(`unknown header keys: ${unknown.join(', ')}`);
  const missing = ['name', 'version'].filter((key) => !(key in header));
  if (missing.length > 0) problems.unshift(`missing required header keys: ${missing.join(', ')}`);
  return [...new Set(problems)];
}

function ruleProblems(header: SkillHeader, content: string): string[] {
  const problems: string[] = [];
  if (semver.valid(header.version) !== header.version) problems.push(`version: ${JSON.stringify(header.version)} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)`);
  if (header.requires_role !== undefined && !roleNames().includes(header.requires_role)) {
    problems.push(`requires_role: unknown role ${header.requires_role} (expected one of ${roleNames().join(', ')})`);
  }
  // The reference refuses these too: whoever may run a dangerous skill should be told what it does.
  if (header.dangerous === true && !header.description?.trim()) problems.push('description: a dangerous skill must say what it does');
  if (content === '') problems.push('the skill has no content: its instructions follow the front-matter header');
  if (content.length > MAX_SKILL_CONTENT_CHARACTERS) problems.push(`the content is longer than ${MAX_SKILL_CONTENT_CHARACTERS} characters`);
  return problems;
}

function skillOf(header: SkillHeader, content: string): Skill {
  return {
    name: header.name,
    version: header.version,
    author: header.author ?? null,
    category: header.category ?? '',
    description: header.description ?? '',
    requiresTools: header.requires_tools ?? [],
    requiresRole: header.requires_role ?? null,
    budgetMax: header.budget_max ?? null,
    dangerous: header.dangerous ?? false,
    enabled: header.enabled ?? true,
    metadata: header.metadata ?? null,
    content,
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
