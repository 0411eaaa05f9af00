import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createBuiltInToolRegistry } from '../../../src/tools/built-ins.ts';
import { fillArguments, fillPlaceholders } from '../../../src/workflows/modes/template/placeholders.ts';
import { modelNodeIds, parseTemplateFile, requiresModel } from '../../../src/workflows/modes/template/template-file.ts';
import { loadTemplateRegistry } from '../../../src/workflows/modes/template/template-registry.ts';
import { compareVersions, isTemplateVersion } from '../../../src/workflows/modes/template/template-version.ts';

const tools = createBuiltInToolRegistry();
const directories: string[] = [];
after(() => { for (const directory of directories) rmSync(directory, { recursive: true, force: true }); });

/** A templates directory holding the given files (name → YAML). */
function templatesDirectory(files: Record<string, string>): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'agentgate-templates-'));
  directories.push(directory);
  for (const [name, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(directory, name)), { recursive: true });
    writeFileSync(path.join(directory, name), source);
  }
  return directory;
}

const template = (fields: { name?: string; version?: string; nodes: string; output?: string }) => [
  `name: ${fields.name ?? 'sample'}`,
  `version: "${fields.version ?? '1.0.0'}"`,
  'description: a sample',
  ...(fields.output ? [`output: ${fields.output}`] : []),
  'nodes:',
  fields.nodes,
].join('\n');

const textNode = (id: string, text: string, dependsOn: string[] = []) =>
  `  - id: ${id}\n    kind: text\n    text: "${text}"${dependsOn.length > 0 ? `\n    depends_on: [${dependsOn.join(', ')}]` : ''}`;

/** The problems of one template source, or [] when it is valid. */
function problemsOf(source: string): string[] {
  const checked = parseTemplateFile('sample.yaml', source, tools);
  return 'problems' in checked ? checked.problems : [];
}

describe('template files', () => {
  test('a valid template loads with its nodes, dependencies and the last node as output', () => {
    const checked = parseTemplateFile('sample.yaml', template({
      nodes: [textNode('a', 'A'), '  - id: sum\n    kind: tool\n    tool: calculator\n    args: { expression: "1 + 1" }', textNode('b', '${a} ${sum}', ['a', 'sum'])].join('\n'),
    }), tools);
    assert.ok('template' in checked, JSON.stringify(checked));
    assert.equal(checked.template.output, 'b');
    assert.deepEqual(checked.template.nodes.map((node) => [node.id, node.kind, node.dependencies]), [['a', 'text', []], ['sum', 'tool', []], ['b', 'text', ['a', 'sum']]]);
    assert.equal(requiresModel(checked.template), false);
  });

  test('a file that is not YAML is refused, saying so', () => {
    assert.match(problemsOf('name: [unclosed\nnodes: {')[0], /not valid YAML/);
  });

  test('missing top-level fields and a node without a kind are each named', () => {
    const problems = problemsOf('name: sample\nnodes:\n  - id: a\n    text: hi');
    assert.ok(problems.some((problem) => /version/.test(problem)), problems.join('\n'));
    assert.ok(problems.some((problem) => /description/.test(problem)), problems.join('\n'));
    assert.ok(problems.some((problem) => /\/nodes\/0.*kind/.test(problem)), problems.join('\n'));
  });

  test('a name that is not a slug, a version that is not a semantic version and an unknown field are refused', () => {
    const problems = problemsOf('name: Not A Slug\nversion: "1.x"\ndescription: d\ncolour: red\nnodes:\n  - id: a\n    kind: text\n    text: hi');
    assert.ok(problems.some((problem) => problem.startsWith('/name')), problems.join('\n'));
    assert.ok(problems.some((problem) => problem.startsWith('/version')), problems.join('\n'));
    assert.ok(problems.some((problem) => /colour/.test(problem)), problems.join('\n'));
  });

  test('each kind needs its own field and takes no other kind\'s', () => {
    const problems = problemsOf(template({
      nodes: '  - id: m\n    kind: model\n    text: hi\n  - id: t\n    kind: tool\n  - id: x\n    kind: text\n    text: hi\n    prompt: no',
    }));
    assert.deepEqual(problems, [
      'node m (model) needs prompt', 'node m (model) does not take text', 'node t (tool) needs tool', 'node x (text) does not take prompt',
    ]);
  });

  test('repeated and reserved ids, unknown dependencies and a missing output are refused', () => {
    assert.deepEqual(problemsOf(template({ nodes: [textNode('a', 'A'), textNode('a', 'B')].join('\n') })), ['node id a is used more than once']);
    assert.match(problemsOf(template({ nodes: textNode('query', 'A') }))[0], /node id query is reserved/);
    assert.deepEqual(problemsOf(template({ nodes: textNode('a', 'A', ['ghost']) })), ['node a depends on ghost, which is not a node']);
    assert.deepEqual(problemsOf(template({ nodes: textNode('a', 'A'), output: 'nowhere' })), ['output nowhere is not a node']);
  });

  test('a dependency cycle is refused, naming the nodes on it', () => {
    const problems = problemsOf(template({ nodes: [textNode('a', 'A', ['c']), textNode('b', 'B', ['a']), textNode('c', 'C', ['b']), textNode('d', 'D')].join('\n') }));
    assert.deepEqual(problems, ['the dependencies form a cycle (a, b, c)']);
  });

  test('an unknown tool or role is refused', () => {
    assert.deepEqual(problemsOf(template({ nodes: '  - id: s\n    kind: tool\n    tool: web_teleport' })), ['node s uses unknown tool web_teleport']);
    assert.match(problemsOf(template({ nodes: '  - id: m\n    kind: model\n    role: wizard\n    prompt: hi' }))[0], /node m has unknown role wizard/);
  });

  test('a placeholder must name the query, a parameter or a node the node depends on', () => {
    assert.deepEqual(problemsOf(template({ nodes: [textNode('a', 'A'), textNode('b', '${a}')].join('\n') })), ['node b uses ${a} but does not depend on a (add it to depends_on)']);
    assert.match(problemsOf(template({ nodes: textNode('a', '${nobody}') }))[0], /node a uses unknown placeholder \$\{nobody\}/);
    assert.match(problemsOf(template({ nodes: '  - id: s\n    kind: tool\n    tool: calculator\n    args: { expression: "${later}" }' }))[0], /unknown placeholder \$\{later\}/);
    assert.deepEqual(problemsOf(template({ nodes: textNode('a', '${query} ${params.tone}') })), []);
  });

  test('model nodes are what needs a model', () => {
    const checked = parseTemplateFile('sample.yaml', template({ nodes: [textNode('a', 'A'), '  - id: m\n    kind: model\n    prompt: "${a}"\n    depends_on: [a]'].join('\n') }), tools);
    assert.ok('template' in checked);
    assert.deepEqual(modelNodeIds(checked.template), ['m']);
    assert.equal(requiresModel(checked.template), true);
  });
});

describe('template registry', () => {
  test('versions are semantic versions, compared as such', () => {
    assert.ok(compareVersions('1.10.0', '1.9.2') > 0);
    assert.ok(compareVersions('1.0.0', '1.0.1') < 0);
    assert.ok(compareVersions('2.0.0-rc.1', '2.0.0') < 0, 'a pre-release comes before its release');
    assert.ok(compareVersions('2.0.0-rc.1', '1.9.9') > 0);
    for (const version of ['1.0.0', '0.1.0', '10.20.30', '1.0.0-alpha.1']) assert.ok(isTemplateVersion(version), version);
    for (const version of ['1e0', '0x1', '1', '1.0', '1.0.0.0', 'v1.0.0', ' 1.0.0', '=1.0.0', '01.0.0', '1.0.0+build', '']) assert.ok(!isTemplateVersion(version), version);
  });

  test('a template file whose version is not a semantic version is refused, naming the field', () => {
    for (const version of ['1.0', '1.0.0.0', 'v1.0.0']) {
      assert.deepEqual(problemsOf(template({ version, nodes: textNode('a', 'A') })),
        [`/version: ${JSON.stringify(version)} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)`]);
    }
  });

  test('finds the latest version by default and a named version when asked, in nested folders too', () => {
    const registry = loadTemplateRegistry(templatesDirectory({
      'report-1.9.yaml': template({ name: 'report', version: '1.9.0', nodes: textNode('a', 'old') }),
      'nested/report-1.10.yml': template({ name: 'report', version: '1.10.0', nodes: textNode('a', 'new') }),
      'other.yaml': template({ name: 'other', nodes: textNode('a', 'other') }),
      'notes.txt': 'not a template',
    }), tools);
    assert.equal(registry.find('report')?.version, '1.10.0');
    assert.equal(registry.find('report', '1.9.0')?.version, '1.9.0');
    assert.equal(registry.find('report', '1.9'), undefined, 'not a version: no part is assumed');
    assert.equal(registry.find('report', '2.0.0'), undefined);
    assert.equal(registry.find('nobody'), undefined);
    assert.deepEqual(registry.list().map((item) => `${item.name}@${item.version}`), ['other@1.0.0', 'report@1.9.0', 'report@1.10.0']);
  });

  test('the latest version by default is the latest release: a pre-release is run only when asked for', () => {
    const registry = loadTemplateRegistry(templatesDirectory({
      'a.yaml': template({ name: 'report', version: '1.0.0', nodes: textNode('a', 'released') }),
      'b.yaml': template({ name: 'report', version: '2.0.0-rc.1', nodes: textNode('a', 'candidate') }),
      'c.yaml': template({ name: 'draft', version: '0.1.0-alpha', nodes: textNode('a', 'only a pre-release') }),
    }), tools);
    assert.equal(registry.find('report')?.version, '1.0.0');
    assert.equal(registry.find('report', '2.0.0-rc.1')?.version, '2.0.0-rc.1');
    assert.equal(registry.find('draft')?.version, '0.1.0-alpha', 'with no release, the latest pre-release');
  });

  test('an invalid file stops loading with a message naming the file and every problem', () => {
    const directory = templatesDirectory({
      'good.yaml': template({ nodes: textNode('a', 'A') }),
      'bad.yaml': template({ name: 'bad', nodes: [textNode('a', 'A', ['ghost']), '  - id: s\n    kind: tool\n    tool: web_teleport'].join('\n') }),
    });
    assert.throws(() => loadTemplateRegistry(directory, tools), (error: Error) => {
      assert.match(error.message, new RegExp(`invalid template file ${path.join(directory, 'bad.yaml').replace(/[.\\/]/g, '\\$&')}`));
      assert.match(error.message, /node a depends on ghost/);
      assert.match(error.message, /unknown tool web_teleport/);
      assert.doesNotMatch(error.message, /good\.yaml/);
      return true;
    });
  });

  test('the same name and version in two files is refused, naming both', () => {
    const directory = templatesDirectory({ 'a.yaml': template({ nodes: textNode('a', 'A') }), 'b.yaml': template({ version: '1.0.0', nodes: textNode('a', 'B') }) });
    assert.throws(() => loadTemplateRegistry(directory, tools), /template sample 1\.0\.0 is defined twice: in .*a\.yaml and .*b\.yaml/);
  });

  test('a templates directory that does not exist stops loading, naming the setting', () => {
    assert.throws(() => loadTemplateRegistry(path.join(tmpdir(), 'no-such-templates-dir'), tools), /TEMPLATES_DIR/);
  });

  test('the shipped templates load', () => {
    const registry = loadTemplateRegistry(path.resolve(import.meta.dirname, '../../../config/templates'), tools);
    assert.equal(registry.find('fixed-report')?.version, '1.1.0');
    assert.equal(requiresModel(registry.find('fixed-report', '1.0.0')!), false);
    assert.deepEqual(modelNodeIds(registry.find('research-brief')!), ['brief']);
  });
});

describe('placeholders', () => {
  const values = { query: 'Q?', params: { tone: 'dry', count: 3, tags: ['a'] }, results: { total: '399' } };

  test('fills the query, parameters and node results; an unsent parameter stays as written', () => {
    assert.equal(fillPlaceholders('${query} ${params.tone} ${params.count} ${params.tags} ${total} ${params.missing}', values),
      'Q? dry 3 ["a"] 399 ${params.missing}');
  });

  test('fills every string in tool arguments and keeps other values', () => {
    assert.deepEqual(fillArguments({ expression: '${total} / ${params.count}', nested: { list: ['${query}', 2] }, flag: true }, values),
      { expression: '399 / 3', nested: { list: ['Q?', 2] }, flag: true });
  });
});
