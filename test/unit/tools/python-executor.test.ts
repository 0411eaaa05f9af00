import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { BUILT_IN_TOOLS } from '../../../src/tools/built-ins.ts';
import { createToolRegistry } from '../../../src/tools/create-registry.ts';
import { pythonExecutorTool } from '../../../src/tools/python/python-executor.ts';
import type { PythonRun } from '../../../src/tools/python/sandbox-protocol.ts';
import { childrenOf, commandLineOf, environmentNamesOf, oomScoreAdjustmentOf, threadNiceValues } from '../../helpers/processes.ts';
import { waitFor } from '../../helpers/gateway.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';

// Every call loads Pyodide on a worker thread (the warm spare hides it only between calls far enough apart):
// seconds each on a busy machine.
const SLOW = { timeout: 120_000 };
const TIME_LIMIT_MS = 1500;
const config = loadConfig({ PYTHON_TIMEOUT_MS: String(TIME_LIMIT_MS) });
const registry = createToolRegistry([pythonExecutorTool]);

async function runCode(code: string, stdin?: string, signal = new AbortController().signal): Promise<PythonRun> {
  const outcome = await registry.invoke('python_executor', stdin === undefined ? { code } : { code, stdin }, offlineToolContext({ settings: config, signal }));
  assert.equal(outcome.error, undefined, 'the call itself succeeds; failures of the program are in its output');
  return outcome.output as PythonRun;
}

/**
 * Runs `await attempt(name, action)` lines; returns each name's outcome: `ran <repr>`, or `<ExceptionType>: <message>`
 * (its first line).
 */
async function probe(...attempts: string[]): Promise<Record<string, string>> {
  const run = await runCode([
    'import inspect, os, socket, _socket, pyodide_js',
    'javascript = pyodide_js.runPython.constructor',
    'async def attempt(name, action):',
    '    try:',
    '        value = action()',
    '        print(f"{name}: ran {(await value) if inspect.isawaitable(value) else value!r}")',
    '    except Exception as error:',
    '        print(f"{name}: {type(error).__name__}: {str(error).partition(chr(10))[0]}")',
    ...attempts,
  ].join('\n'));
  assert.equal(run.error, null, run.error ?? '');
  return Object.fromEntries(run.stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]));
}

describe('python_executor', () => {
  it('is a dangerous built-in code tool, free, whose input is validated before anything runs; a workspace needs a session', async () => {
    assert.ok(BUILT_IN_TOOLS.includes(pythonExecutorTool));
    assert.deepEqual([pythonExecutorTool.category, pythonExecutorTool.dangerous, pythonExecutorTool.costPerUseUsd], ['code', true, 0]);
    const context = offlineToolContext({ settings: config });
    assert.match((await registry.invoke('python_executor', {}, context)).error!, /must have required property 'code'/);
    assert.match((await registry.invoke('python_executor', { code: 'x'.repeat(100_001) }, context)).error!, /must NOT have more than 100000 characters/);
    assert.match((await registry.invoke('python_executor', { code: '1', use_workspace: true }, context)).error!, /this call has no session/);
  });

  it('returns stdout, stderr, stdin as read, and the repr of the last expression; long output is cut at 64 kB', SLOW, async () => {
    const run = await runCode('import sys\nprint(6 * 7)\nprint(input().upper())\nsys.stderr.write("e" * 100_000)\n{"answer": [6 * 7]}', 'hello\n');
    assert.equal(run.stdout, '42\nHELLO\n');
    assert.equal(run.result, "{'answer': [42]}");
    assert.equal(run.error, null);
    assert.equal(run.timed_out, false);
    assert.ok(run.stderr.startsWith('e'.repeat(65_536)));
    assert.match(run.stderr, /\n…truncated \(34464 more bytes\)$/);
    assert.equal(typeof run.duration_ms, 'number');
  });

  it('a syntax error comes back as the error, pointing at the line', SLOW, async () => {
    const run = await runCode('x = 1\nprint(x');
    assert.equal(run.result, null);
    assert.match(run.error!, /File "<code>", line 2/);
    assert.match(run.error!, /SyntaxError: '\(' was never closed/);
  });

  it('an exception comes back as its traceback, from the program down, with what it printed before', SLOW, async () => {
    const run = await runCode('def divide(a, b):\n    return a / b\nprint("before")\ndivide(1, 0)');
    assert.equal(run.stdout, 'before\n');
    assert.match(run.error!, /^Traceback \(most recent call last\):\n {2}File "<code>", line 4, in <module>/);
    assert.match(run.error!, /line 2, in divide/);
    assert.match(run.error!, /ZeroDivisionError: division by zero\n$/);
    assert.doesNotMatch(run.error!, /_pyodide|pyodide\/code/, 'the runner\'s own frames are left out');
  });

  describe('a runaway program', () => {
    let server: http.Server;
    let url: string;
    before(async () => {
      server = http.createServer((_request, response) => response.end('ok'));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
      await (await fetch(url)).text(); // the first fetch loads the HTTP client: not what is measured
    });
    after(() => server.close());

    it('is stopped at the time limit, and the event loop answers meanwhile', SLOW, async () => {
      const samples: Array<{ at: number; timerLagMs: number; httpMs: number }> = [];
      let running = true;
      const measure = async () => {
        while (running) {
          const startedAt = performance.now();
          await new Promise((resolve) => setTimeout(resolve, 0));
          const timerLagMs = performance.now() - startedAt;
          const requestedAt = performance.now();
          assert.equal(await (await fetch(url)).text(), 'ok');
          samples.push({ at: performance.now(), timerLagMs, httpMs: performance.now() - requestedAt });
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const measuring = measure();
      const run = await runCode('while True:\n    pass');
      const endedAt = performance.now();
      running = false;
      await measuring;

      assert.equal(run.timed_out, true);
      assert.match(run.error!, /stopped at the time limit of 1500 ms/);
      assert.ok(run.duration_ms >= TIME_LIMIT_MS && run.duration_ms < TIME_LIMIT_MS + 1000, `ran ${run.duration_ms} ms`);
      const whileLooping = samples.filter((sample) => sample.at > endedAt - TIME_LIMIT_MS);
      assert.ok(whileLooping.length >= 10, `${whileLooping.length} samples while the loop ran`);
      const slowest = Math.max(...whileLooping.map((sample) => Math.max(sample.timerLagMs, sample.httpMs)));
      // A loop run on this thread would hold every answer for the whole time limit; a busy machine delays some by
      // tens of milliseconds, so the bound is half the limit rather than what a quiet machine shows.
      assert.ok(slowest < TIME_LIMIT_MS / 2, `the slowest answer took ${slowest.toFixed(1)} ms`);
    });
  });

  it('a 2 GB allocation is refused with an error, and so is reaching it piece by piece; the process lives on', SLOW, async () => {
    const run = await runCode([
      'try:\n    bytearray(2 * 1024**3)\nexcept Exception as error:\n    print(type(error).__name__)',
      'chunks = [bytearray(512 * 1024**2) for _ in range(4)]',
    ].join('\n'));
    assert.match(run.stdout, /^(OverflowError|MemoryError)\n$/);
    assert.match(run.error!, /MemoryError/);
    assert.equal(run.timed_out, false);
  });

  describe('the network', () => {
    let listener: net.Server;
    let port: number;
    let connections = 0;
    before(async () => {
      listener = net.createServer((socket) => { connections += 1; socket.destroy(); });
      listener.listen(0, '127.0.0.1');
      await once(listener, 'listening');
      port = (listener.address() as net.AddressInfo).port;
    });
    after(() => listener.close());

    it('is out of reach: sockets, the raw socket module and Node through the JavaScript bridge all fail; no connection arrives', SLOW, async () => {
      const outcomes = await probe(
        `await attempt("socket", lambda: socket.create_connection(("127.0.0.1", ${port})))`,
        `await attempt("raw socket", lambda: _socket.socket().connect(("127.0.0.1", ${port})))`,
        `await attempt("bridge", lambda: javascript("return import('node:net').then((net) => net.connect(${port}, '127.0.0.1'))")())`,
      );
      assert.match(outcomes.socket, /^PermissionError: .*network access is disabled in the Python sandbox$/);
      assert.match(outcomes['raw socket'], /^OSError: /);
      assert.equal(outcomes.bridge, 'JsException: Error: loading node:net is disabled in the Python sandbox');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(connections, 0);
    });
  });

  it('fetch, pyodide.http, host commands, host files and the process are out of reach', SLOW, async () => {
    const outcomes = await probe(
      'def js_fetch():\n    import js\n    return js.fetch',
      'def pyfetch():\n    import pyodide.http\n    return pyodide.http.pyfetch',
      'await attempt("js.fetch", js_fetch)',
      'await attempt("pyodide.http", pyfetch)',
      'await attempt("os.system", lambda: os.system("id"))',
      'await attempt("host file", lambda: open("/etc/hostname").read())',
      'await attempt("host mount", lambda: pyodide_js.mountNodeFS("/host", "/"))',
      'await attempt("process", lambda: javascript("return [process.env.PATH, typeof process.getBuiltinModule]")().to_py())',
    );
    assert.deepEqual(outcomes, {
      'js.fetch': 'AttributeError: fetch',
      'pyodide.http': 'ModuleNotFoundError: import of pyodide.http halted; None in sys.modules',
      'os.system': 'PermissionError: [Errno 63] running host commands is disabled in the Python sandbox',
      'host file': "FileNotFoundError: [Errno 44] No such file or directory: '/etc/hostname'",
      'host mount': "JsException: Error: hostPath '/' does not exist",
      process: "ran [None, 'undefined']",
    });
  });

  it('a cancelled call stops at once with the reason', SLOW, async () => {
    const controller = new AbortController();
    const running = runCode('while True:\n    pass', undefined, controller.signal);
    setTimeout(() => controller.abort(new Error('task cancelled')), 300);
    const startedAt = performance.now();
    await assert.rejects(running, /task cancelled/);
    assert.ok(performance.now() - startedAt < 1000);
  });

  it('runs in a process of its own, with no environment, below normal CPU priority (the lowest once it has run 1 s), first for the OOM killer', SLOW, async () => {
    const sandboxes = async () => {
      const children = await childrenOf(process.pid);
      const commandLines = await Promise.all(children.map(commandLineOf));
      return children.filter((_pid, index) => commandLines[index].includes('sandbox-host.ts'));
    };
    const controller = new AbortController();
    const longer = loadConfig({ PYTHON_TIMEOUT_MS: '60000' });
    const running = registry.invoke('python_executor', { code: 'while True:\n    pass' }, offlineToolContext({ settings: longer, signal: controller.signal }));
    const demoted = await waitFor('the program to be demoted', async () => {
      for (const pid of await sandboxes()) {
        const niceValues = await threadNiceValues(pid);
        if (niceValues.length > 0 && niceValues.every((nice) => nice === 19)) return pid;
      }
      return undefined;
    }, 90_000);
    // The sandbox that ran the program (a spare one just spawned lowers its own priority as it starts, before it takes code).
    assert.ok((await threadNiceValues(demoted)).every((nice) => nice >= 10), `every thread of sandbox ${demoted} is below normal priority`);
    // Node's own IPC channel is named in the environment, and nothing else is.
    assert.deepEqual((await environmentNamesOf(demoted)).filter((name) => !name.startsWith('NODE_CHANNEL_')), []);
    assert.equal(await oomScoreAdjustmentOf(demoted), 1000);
    controller.abort(new Error('task cancelled'));
    await assert.rejects(running, /task cancelled/);
    await waitFor('the cancelled sandbox to be gone', async () => !(await sandboxes()).includes(demoted) || undefined, 5_000);
  });
});
