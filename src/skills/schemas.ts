import { Type } from 'typebox';

export const SkillNameParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'a skill name (its highest version) or `name@version`' }),
});

export const ListSkillsQuery = Type.Object({
  category: Type.Optional(Type.String({ maxLength: 64, description: 'only the skills of this category (empty: all)' })),
});

const summaryFields = {
  name: Type.String(),
  version: Type.String({ description: 'a semantic version' }),
  category: Type.String(),
  description: Type.String(),
  requires_tools: Type.Array(Type.String()),
  dangerous: Type.Boolean({ description: 'only an admin or owner, or a key with the skills:dangerous scope, may run it' }),
  enabled: Type.Boolean({ description: 'a disabled skill is listed but refused when a task asks for it' }),
};

/** A skill in a list (spec 2.12; Shannon's SDK `list_skills`, `get_skill_versions`). */
export const SkillSummary = Type.Object(summaryFields);

/** The whole skill (`get_skill`): the summary, its instructions and how a task runs it. */
export const SkillDetail = Type.Object({
  ...summaryFields,
  author: Type.Union([Type.String(), Type.Null()]),
  requires_role: Type.Union([Type.String(), Type.Null()], { description: 'the role preset its agent runs as; null: the task\'s role, else generalist' }),
  budget_max: Type.Union([Type.Integer(), Type.Null()], { description: 'the most tokens a task running it may spend' }),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'the file\'s own `metadata` header, as written' }),
  content: Type.String({ description: 'the markdown instructions its agent is given' }),
});

export const ListSkillsResponse = Type.Object({
  skills: Type.Array(SkillSummary),
  count: Type.Integer(),
  categories: Type.Array(Type.String(), { description: 'every category of the skills, whatever the filter' }),
});

export const SkillResponse = Type.Object({
  skill: SkillDetail,
  metadata: Type.Object({
    source_path: Type.String({ description: 'the file, relative to SKILLS_PATH' }),
    content_hash: Type.String({ description: 'SHA-256 of the file, hex' }),
    loaded_at: Type.String({ format: 'date-time', description: 'when this content of the file was read' }),
  }),
});

export const SkillVersionsResponse = Type.Object({
  name: Type.String(),
  versions: Type.Array(SkillSummary, { description: 'highest version first' }),
  count: Type.Integer(),
});
