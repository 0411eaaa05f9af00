import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { loadConfig } from '../../../src/config.ts';
import { BASH_DISABLED_MESSAGE, bashTool, OUTPUT_LIMIT_BYTES, runBash } from '../../../src/tools/bash.ts';
import { BUILT_IN_TOOLS, createBuiltInToolRegistry } from '../../../src/tools/built-ins.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';

const enabled = (signal = new AbortController().signal) =>
  offlineToolContext({ signal, config: loadConfig({ TOOLS_BASH_ENABLED: '1', TOOLS_BASH_TIMEOUT_MS: '1000' }) });

test('bash is off by default and says how to turn it on', async () => {
  const registry = createBuiltInToolRegistry();
  assert.deepEqual(await registry.invoke('bash', { command: 'echo hi' }, offlineToolContext()), { error: BASH_DISABLED_MESSAGE });
  assert.equal(BASH_DISABLED_MESSAGE, 'bash is disabled on this server (set TOOLS_BASH_ENABLED=1 to enable it)');
});

test('bash is a built-in code tool marked dangerous', () => {
  assert.ok(BUILT_IN_TOOLS.includes(bashTool));
  assert.deepEqual([bashTool.category, bashTool.dangerous], ['code', true]);
});

test('enabled, it returns the exit code, stdout and stderr', async () => {
  const result = await runBash('echo out; echo err >&2; exit 3', enabled());
  assert.deepEqual(result, { exit_code: 3, stdout: 'out\n', stderr: 'err\n', timed_out: false });
});

test('it runs in a fresh directory that is its HOME and is removed afterwards', async () => {
  const result = await runBash('pwd; echo "$HOME"; ls -A | wc -l', enabled());
  const [directory, home, entries] = result.stdout.trim().split('\n');
  assert.equal(home, directory);
  assert.equal(entries.trim(), '0');
  assert.equal(existsSync(directory), false);
});

test('the environment holds no server secrets', async (t) => {
  for (const name of ['DATABASE_URL', 'JWT_SECRET']) {
    const previous = process.env[name];
    process.env[name] = 'secret-value';
    t.after(() => { if (previous === undefined) delete process.env[name]; else process.env[name] = previous; });
  }
  const { stdout } = await runBash('env', enabled());
  assert.doesNotMatch(stdout, /DATABASE_URL|JWT_SECRET|secret-value/);
  assert.deepEqual(stdout.trim().split('\n').map((line) => line.split('=')[0]).filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name)).sort(),
    ['HOME', 'LANG', 'PATH']);
});

test('a command past the time limit is killed with what it started', async () => {
  const startedAt = Date.now();
  const result = await runBash('sleep 30 & echo $!; wait', enabled());
  assert.equal(result.timed_out, true);
  assert.equal(result.exit_code, 137);
  assert.ok(Date.now() - startedAt < 5000, `took ${Date.now() - startedAt} ms`);
  await waitUntilGone(Number(result.stdout.trim()));
});

test('stdout and stderr are each cut at 64 kB, and the cut is said', async () => {
  const result = await runBash(`head -c 200000 /dev/zero | tr '\\0' a; head -c 100000 /dev/zero | tr '\\0' b >&2`, enabled());
  assert.equal(result.stdout.slice(0, OUTPUT_LIMIT_BYTES), 'a'.repeat(OUTPUT_LIMIT_BYTES));
  assert.match(result.stdout.slice(OUTPUT_LIMIT_BYTES), /^\n\[output cut at 65536 bytes; 134464 more bytes dropped\]$/);
  assert.match(result.stderr, /^b{65536}\n\[output cut at 65536 bytes; 34464 more bytes dropped\]$/);
  assert.equal(result.exit_code, 0);
});

test('an abort of the call kills the command and rejects', async () => {
  const controller = new AbortController();
  const running = runBash('sleep 30', enabled(controller.signal));
  setTimeout(() => controller.abort(new Error('cancelled')), 100);
  const startedAt = Date.now();
  await assert.rejects(running, /cancelled/);
  assert.ok(Date.now() - startedAt < 900, 'before the time limit');
});

/** A killed process may linger as a zombie until its new parent reaps it: that counts as gone. */
async function waitUntilGone(pid: number): Promise<void> {
  assert.ok(pid > 0, 'the background pid was printed');
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`process ${pid} still runs`);
}

function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
