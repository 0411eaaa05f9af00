import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runRefused } from '../helpers/gateway.ts';

// The research files are read before the database is touched: no database is needed to see a refusal.
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';

const CASES = [
  {
    variable: 'RESEARCH_STRATEGIES_CONFIG', shipped: 'config/research-strategies.yaml',
    edit: (text: string) => text.replace('max_concurrent_agents: 5', 'max_concurrent_agents: 50'),
    expected: (file: string) => `invalid research strategies file ${file}:\n  /strategies/deep/max_concurrent_agents: must be <= 20`,
  },
  {
    variable: 'CITATION_CREDIBILITY_CONFIG', shipped: 'config/citation-credibility.yaml',
    edit: (text: string) => text.replace('default_score: 0.60', 'default_score: high'),
    expected: (file: string) => `invalid citation credibility file ${file}:\n  /default_score: must be number`,
  },
];

for (const { variable, shipped, edit, expected } of CASES) {
  test(`an invalid ${variable} file stops start-up, naming the file and the problem`, async (t) => {
    const directory = mkdtempSync(path.join(tmpdir(), 'agentgate-research-config-'));
    t.after(() => rmSync(directory, { recursive: true, force: true }));
    const file = path.join(directory, path.basename(shipped));
    writeFileSync(file, edit(readFileSync(shipped, 'utf8')));
    const refused = await runRefused(NO_DATABASE, { [variable]: file });
    assert.equal(refused.code, 1, refused.output);
    assert.ok(refused.output.includes(expected(file)), refused.output);

    const missing = await runRefused(NO_DATABASE, { [variable]: path.join(directory, 'absent.yaml') });
    assert.equal(missing.code, 1, missing.output);
    assert.match(missing.output, new RegExp(`invalid [a-z ]+ file ${path.join(directory, 'absent.yaml').replaceAll('/', '\\/')}:\\n {2}ENOENT`));
  });
}
