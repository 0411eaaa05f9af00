import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Ignore } from '@balena/dockerignore';
import { loadConfig } from '../../../src/config.ts';
import { mainArgumentProblem } from '../../helpers/deploy/app-facts.ts';
import { dockerfileProblems, readImage } from '../../helpers/deploy/dockerfile.ts';
import { readRepoFile, ROOT } from '../../helpers/deploy/repo-files.ts';

const dockerfile = readRepoFile('Dockerfile');
const image = readImage(dockerfile);
const packageJson = JSON.parse(readRepoFile('package.json'));
// CommonJS (`module.exports = ignore`) whose types declare an ES default export, so it is required as CommonJS.
const dockerignore = createRequire(import.meta.url)('@balena/dockerignore') as () => Ignore;

describe('Dockerfile', () => {
  it('has nothing that Docker\'s Dockerfile parser reports', () => {
    assert.deepEqual(dockerfileProblems(dockerfile), []);
  });

  it('a copy with a misspelt instruction or flag is refused', () => {
    const broken = dockerfile
      .replace('USER 1000:1000', 'USR 1000:1000')
      .replace('HEALTHCHECK --interval=15s', 'HEALTHCHECK --intervall=15s');
    const problems = dockerfileProblems(broken);
    assert.ok(problems.some((problem) => /Unknown instruction: USR/.test(problem)), problems.join('\n'));
    assert.ok(problems.some((problem) => /Unknown flag: intervall/.test(problem)), problems.join('\n'));
  });

  it('builds on the Node major version that npm scripts pin', () => {
    const major = /\d+/.exec(packageJson.devDependencies.node)![0];
    for (const base of image.baseImages) assert.match(base, new RegExp(`^node:${major}-`), base);
  });

  it('runs as a numeric non-root user', () => {
    const [user, group] = image.user.split(':');
    assert.match(user, /^[1-9]\d*$/, 'a numeric uid lets Kubernetes check runAsNonRoot');
    assert.match(group ?? '', /^[1-9]\d*$/);
  });

  it('exposes the port the server listens on by default', () => {
    assert.deepEqual(image.exposedPorts, [String(loadConfig({ ...image.env, JWT_SECRET: 'x'.repeat(32) }).port)]);
  });

  it('starts src/main.ts under tini, serving every role by default', () => {
    assert.deepEqual(image.entrypoint, ['tini', '--', 'node', 'src/main.ts']);
    assert.equal(mainArgumentProblem(image.cmd), undefined);
  });

  it('checks its health with the probe script on /health', () => {
    assert.deepEqual(image.healthcheck, ['node', 'deploy/probe.ts', '/health']);
  });

  it('its settings pass the production checks once JWT_SECRET and DATABASE_URL are given', () => {
    assert.equal(image.env.GATEWAY_ENV, 'production');
    assert.throws(() => loadConfig(image.env), /JWT_SECRET/);
    const config = loadConfig({ ...image.env, JWT_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://db/agentgate' });
    assert.equal(config.skipAuth, false);
  });
});

describe('.dockerignore', () => {
  const context = dockerignore().add(readRepoFile('.dockerignore'));

  it('sends every file the Dockerfile copies', () => {
    for (const source of image.copiedFromContext) {
      assert.ok(existsSync(path.join(ROOT, source)), `${source} exists`);
      assert.equal(context.ignores(source), false, `${source} is in the build context`);
    }
  });

  it('sends every file under src/ and config/, which the server reads at run time', () => {
    const files = ['src', 'config'].flatMap((folder) => readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name))));
    assert.ok(files.includes('src/tools/python/sandbox-prelude.py') && files.some((file) => file.startsWith('src/db/migrations/')));
    assert.deepEqual(files.filter((file) => context.ignores(file)), []);
  });

  it('leaves out installed modules, data, secrets, tests and history', () => {
    for (const file of ['node_modules/pg/package.json', 'data/postgres/PG_VERSION', '.env', 'deploy/.env', 'test/unit/config.test.ts', '.git/HEAD', 'bench/RESULTS.md']) {
      assert.equal(context.ignores(file), true, `${file} is left out`);
    }
  });
});
