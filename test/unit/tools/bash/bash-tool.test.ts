import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, test } from 'node:test';
import { loadConfig } from '../../../../src/config.ts';
import { BASH_DISABLED_MESSAGE, bashTool, OUTPUT_LIMIT_BYTES, runBash } from '../../../../src/tools/bash/bash-tool.ts';
import { checkBashSandbox } from '../../../../src/tools/bash/check-sandbox.ts';
import { BUILT_IN_TOOLS, createBuiltInToolRegistry } from '../../../../src/tools/built-ins.ts';
import { bashSandboxMissing } from '../../../helpers/bash-sandbox.ts';
import { offlineToolContext } from '../../../helpers/tool-context.ts';

const enabled = (signal = new AbortController().signal, env: Record<string, string> = {}) =>
  offlineToolContext({ signal, settings: loadConfig({ TOOLS_BASH_ENABLED: '1', TOOLS_BASH_TIMEOUT_MS: '2000', ...env }) });

test('bash is off by default and says how to turn it on', async () => {
  const registry = createBuiltInToolRegistry();
  assert.deepEqual(await registry.invoke('bash', { command: 'echo hi' }, offlineToolContext()), { error: BASH_DISABLED_MESSAGE });
  assert.equal(BASH_DISABLED_MESSAGE, 'bash is disabled on this server (set TOOLS_BASH_ENABLED=1 to enable it)');
});

test('bash is a built-in code tool marked dangerous', () => {
  assert.ok(BUILT_IN_TOOLS.includes(bashTool));
  assert.deepEqual([bashTool.category, bashTool.dangerous], ['code', true]);
});

test('the start-up check fails without a usable bubblewrap, naming what to install', async () => {
  for (const bwrap of ['/nonexistent/bwrap', '/bin/false']) {
    await assert.rejects(checkBashSandbox(loadConfig({ TOOLS_BASH_ENABLED: '1', BWRAP_PATH: bwrap })),
      (error: Error) => error.message.startsWith(`TOOLS_BASH_ENABLED=1, but the bash sandbox does not work (${bwrap}: `)
        && /apt-get install bubblewrap/.test(error.message) && /BWRAP_PATH/.test(error.message));
  }
});

describe('in its sandbox', { skip: bashSandboxMissing || undefined }, () => {
  test('the start-up check passes', async () => {
    await checkBashSandbox(loadConfig({ TOOLS_BASH_ENABLED: '1' }));
  });

  test('it returns the exit code, stdout and stderr', async () => {
    const result = await runBash('echo out; echo err >&2; exit 3', enabled());
    assert.deepEqual(result, { exit_code: 3, stdout: 'out\n', stderr: 'err\n', timed_out: false });
  });

  test('it runs as nobody in an empty scratch directory, its HOME, that the next call does not see', async () => {
    const first = await runBash('id -u; id -g; pwd; echo "$HOME"; ls -A | wc -l; touch left-behind /tmp/left-behind', enabled());
    assert.deepEqual(first.stdout.trim().split('\n'), ['65534', '65534', '/work', '/work', '0']);
    const second = await runBash('ls -A /work /tmp', enabled());
    assert.equal(second.stdout, '/tmp:\n\n/work:\n');
  });

  test('its environment is PATH, HOME, LANG and TMPDIR, whatever the server has', async (t) => {
    for (const name of ['DATABASE_URL', 'JWT_SECRET']) {
      const previous = process.env[name];
      process.env[name] = 'secret-value';
      t.after(() => { if (previous === undefined) delete process.env[name]; else process.env[name] = previous; });
    }
    const { stdout } = await runBash('env; cat /proc/1/environ /proc/$PPID/environ', enabled());
    assert.doesNotMatch(stdout, /DATABASE_URL|JWT_SECRET|secret-value/);
    const names = stdout.trim().split('\n').map((line) => line.split('=')[0]).filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name));
    assert.deepEqual(names.sort(), ['HOME', 'LANG', 'PATH', 'TMPDIR']);
  });

  test('it sees its own processes only, and none of the server\'s files', async () => {
    const result = await runBash(`ls /proc | grep -c '^[0-9]*$'; ls ${JSON.stringify(import.meta.dirname)} ${JSON.stringify(process.cwd())} /root /home /var /opt; echo > /usr/written`, enabled());
    const [processes, ...rest] = result.stdout.trim().split('\n');
    assert.ok(Number(processes) <= 5, `${processes} processes in view`);
    assert.equal(rest.length, 0, result.stdout);
    for (const path of [import.meta.dirname, process.cwd(), '/root', '/home', '/var', '/opt']) {
      assert.match(result.stderr, new RegExp(`ls: cannot access '${path}': No such file or directory`));
    }
    assert.match(result.stderr, /\/usr\/written: Read-only file system/);
  });

  test('it has no network: a server on the host\'s 127.0.0.1 is not reached', async (t) => {
    let connections = 0;
    const server = net.createServer((socket) => { connections += 1; socket.destroy(); }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const { port } = server.address() as net.AddressInfo;
    const result = await runBash(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`, enabled());
    assert.notEqual(result.exit_code, 0);
    assert.doesNotMatch(result.stdout, /connected/);
    assert.equal(connections, 0);
  });

  test('each process\'s memory and the scratch space are capped', async () => {
    const memory = await runBash('head -c 100000000 /dev/zero | tail -c 100000000 | wc -c', enabled(undefined, { TOOLS_BASH_MEMORY_MB: '64', TOOLS_BASH_TIMEOUT_MS: '10000' }));
    assert.deepEqual([memory.stdout, memory.stderr], ['0\n', 'tail: memory exhausted\n']);
    const disk = await runBash('head -c 100000000 /dev/zero > /work/big; ls -l /work/big | cut -d" " -f5', enabled(undefined, { TOOLS_BASH_TIMEOUT_MS: '10000' }));
    assert.match(disk.stderr, /No space left on device/);
    assert.equal(disk.stdout.trim(), String(64 * 1024 * 1024));
  });

  test('as root, the sandbox user\'s processes are capped, which stops a fork bomb', { skip: process.getuid?.() !== 0 && 'the server is not root' }, async () => {
    const result = await runBash('for i in $(seq 1 400); do sleep 5 & done 2>/dev/null; ls /proc | grep -c "^[0-9]*$"', enabled(undefined, { TOOLS_BASH_TIMEOUT_MS: '4000' }));
    assert.ok(Number(result.stdout.trim()) <= 257, `${result.stdout.trim()} processes`);
  });

  test('a command past the time limit is killed with what it started', async () => {
    const startedAt = Date.now();
    const result = await runBash('sleep 31.4159 & wait', enabled());
    assert.equal(result.timed_out, true);
    assert.equal(result.exit_code, 137);
    assert.ok(Date.now() - startedAt < 6000, `took ${Date.now() - startedAt} ms`);
    await waitUntilNoProcess('sleep\u000031.4159');
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
    const running = runBash('sleep 27.1828', enabled(controller.signal));
    setTimeout(() => controller.abort(new Error('cancelled')), 300);
    const startedAt = Date.now();
    await assert.rejects(running, /cancelled/);
    assert.ok(Date.now() - startedAt < 1900, 'before the time limit');
    await waitUntilNoProcess('sleep\u000027.1828');
  });
});

/** No process of the host runs this command line (NUL-separated, as in /proc/<pid>/cmdline); a zombie counts as gone. */
async function waitUntilNoProcess(commandLine: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (!processesRunning(commandLine)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`a process still runs ${JSON.stringify(commandLine)}`);
}

function processesRunning(commandLine: string): boolean {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).some((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(commandLine) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  });
}
