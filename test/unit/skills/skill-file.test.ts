import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseSkillFile } from '../../../src/skills/skill-file.ts';

const problemsOf = (text: string) => {
  const parsed = parseSkillFile('skill.md', text, new Date(0));
  return 'problems' in parsed ? parsed.problems : [];
};

describe('a skill file', () => {
  it('is a front-matter header and markdown content, with the defaults filled and the file hashed', () => {
    const text = '---\nname: brief\nversion: 1.2.0\nrequires_tools: [web_search]\n---\n\n# Brief\nWrite it.\n';
    const parsed = parseSkillFile('brief.md', text, new Date(0));
    assert.ok('entry' in parsed);
    assert.deepEqual(parsed.entry.skill, {
      name: 'brief', version: '1.2.0', author: null, category: '', description: '', requiresTools: ['web_search'], requiresRole: null,
      budgetMax: null, dangerous: false, enabled: true, metadata: null, content: '# Brief\nWrite it.',
    });
    assert.equal(parsed.entry.contentHash, createHash('sha256').update(text).digest('hex'), 'the whole file\'s SHA-256, as the reference');
  });

  it('names every problem: missing keys, unknown keys (typos), bad values, rules the schema cannot say', () => {
    assert.deepEqual(problemsOf('# no header\n'), ['no front-matter header: the file must start with a `---` block giving at least name and version']);
    assert.deepEqual(problemsOf('---\nversion: 1.0.0\nrequires_tool: [x]\n---\nBody.'), ['missing required header keys: name', 'unknown header keys: requires_tool']);
    assert.deepEqual(problemsOf('---\nname: a\nversion: 1.0\n---\nBody.'), ['version: must be string (a semantic version such as 1.0.0)']);
    assert.deepEqual(problemsOf('---\nname: a\nversion: v1.0.0\n---\nBody.'), ['version: "v1.0.0" is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)']);
    assert.deepEqual(problemsOf('---\nname: a b\nversion: 1.0.0\n---\nBody.'), ['name: must match pattern "^[A-Za-z0-9_-]{1,100}$"']);
    assert.deepEqual(problemsOf('---\nname: a\nversion: 1.0.0\nrequires_role: wizard\ndangerous: true\n---\n'), [
      'requires_role: unknown role wizard (expected one of generalist, analysis, research, writer, critic, developer, browser_use, data_analytics)',
      'description: a dangerous skill must say what it does',
      'the skill has no content: its instructions follow the front-matter header',
    ]);
    assert.match(problemsOf('---\nname: [\n---\nBody.')[0], /^the front matter is not valid YAML: /);
  });
});
