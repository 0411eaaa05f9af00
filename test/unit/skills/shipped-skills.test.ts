import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import path from 'node:path';
import { loadSkillCatalogue } from '../../../src/skills/skill-catalogue.ts';
import { findRolePreset } from '../../../src/workflows/agent-calls/role-presets.ts';

const SHIPPED = path.resolve(import.meta.dirname, '../../../config/skills');

describe('the skills shipped in config/skills', () => {
  it('all load, and each one\'s required tools are among its role\'s', async () => {
    const catalogue = await loadSkillCatalogue(SHIPPED);
    assert.deepEqual(catalogue.problems(), []);
    assert.deepEqual(catalogue.latest().map((entry) => entry.skill.name),
      ['code-review', 'data-analysis', 'debugging', 'plain-language', 'research-brief', 'workspace-cleanup']);
    for (const { skill } of catalogue.latest()) {
      const preset = findRolePreset(skill.requiresRole ?? 'generalist')!;
      const tools = preset.tools === 'all' ? undefined : preset.tools;
      for (const tool of skill.requiresTools) assert.ok(tools === undefined || tools.includes(tool), `${skill.name}: ${tool} is not a tool of ${preset.name}`);
      assert.ok(skill.description.length > 0 && skill.budgetMax !== null, `${skill.name} says what it does and caps its budget`);
    }
  });
});
