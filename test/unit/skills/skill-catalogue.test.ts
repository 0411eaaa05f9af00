import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createSkillCatalogue, loadSkillCatalogue } from '../../../src/skills/skill-catalogue.ts';

const skill = (name: string, version: string, body = 'Do it.') => `---\nname: ${name}\nversion: ${version}\n---\n${body}\n`;

function directoryWith(files: Record<string, string>): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'skill-catalogue-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(directory, file)), { recursive: true });
    writeFileSync(path.join(directory, file), text);
  }
  after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

describe('the skill catalogue', () => {
  it('resolves a name to its highest release and name@version exactly; skips README.md and hidden entries', async () => {
    const catalogue = await loadSkillCatalogue(directoryWith({
      'a/one.md': skill('one', '1.9.0'), 'b/one.md': skill('one', '1.10.0'), 'one-rc.md': skill('one', '2.0.0-beta.1'),
      'README.md': 'not a skill', '..data/hidden.md': skill('hidden', '1.0.0'), 'notes.txt': 'x',
    }));
    assert.equal(catalogue.find('one')?.skill.version, '1.10.0');
    assert.equal(catalogue.find('one@1.9.0')?.skill.version, '1.9.0');
    assert.equal(catalogue.find('one@2.0.0-beta.1')?.skill.version, '2.0.0-beta.1');
    assert.equal(catalogue.find('hidden'), undefined);
    assert.deepEqual(catalogue.versions('one').map((entry) => entry.skill.version), ['2.0.0-beta.1', '1.10.0', '1.9.0']);
    assert.deepEqual(catalogue.problems(), []);
  });

  it('keeps a broken file\'s last good version, names the problem, and drops a removed file\'s skill', async () => {
    const directory = directoryWith({ 'live.md': skill('live', '1.0.0', 'First.'), 'gone.md': skill('gone', '1.0.0') });
    const catalogue = createSkillCatalogue(directory);
    await catalogue.reload();
    writeFileSync(path.join(directory, 'live.md'), '---\nname: live\n---\nNo version.\n');
    rmSync(path.join(directory, 'gone.md'));
    await catalogue.reload();
    assert.equal(catalogue.find('live')?.skill.content, 'First.');
    assert.equal(catalogue.find('gone'), undefined);
    assert.deepEqual(catalogue.problems(), [{ file: 'live.md', problem: 'missing required header keys: version' }]);
    writeFileSync(path.join(directory, 'live.md'), skill('live', '1.0.0', 'Second.'));
    await catalogue.reload();
    assert.equal(catalogue.find('live')?.skill.content, 'Second.');
    assert.deepEqual(catalogue.problems(), []);
  });

  it('refuses to start on a directory that does not exist, naming the setting', async () => {
    await assert.rejects(loadSkillCatalogue(path.join(os.tmpdir(), 'no-such-skills-directory')), /skills directory .*no-such-skills-directory does not exist \(set SKILLS_PATH\)/);
  });
});
