import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { listSkills, readSkill, readSkillVersions } from './read-skills.ts';
import { ListSkillsQuery, ListSkillsResponse, SkillNameParams, SkillResponse, SkillVersionsResponse } from './schemas.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };

/** The skills catalogue (spec 4.10; Shannon's SDK `list_skills`, `get_skill`, `get_skill_versions`). */
export async function skillRoutes(app: App, deps: Deps) {
  app.get('/api/v1/skills', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['skills'], summary: 'List the skills (the highest version of each), optionally of one category', querystring: ListSkillsQuery, response: { 200: ListSkillsResponse, ...errors } },
  }, async (request) => listSkills(deps, request.query.category));

  app.get('/api/v1/skills/:name', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['skills'], summary: 'One skill with its instructions: `name` for its highest version, or `name@version`', params: SkillNameParams, response: { 200: SkillResponse, ...errors } },
  }, async (request) => readSkill(deps, request.params.name));

  app.get('/api/v1/skills/:name/versions', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['skills'], summary: 'Every version of a skill, highest first', params: SkillNameParams, response: { 200: SkillVersionsResponse, ...errors } },
  }, async (request) => readSkillVersions(deps, request.params.name));
}
