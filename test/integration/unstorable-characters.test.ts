import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { stdioTestServerLines } from '../fixtures/mcp-test-config.ts';

// Postgres refuses NUL in text and jsonb, and jsonb refuses unpaired surrogates (`\ud800`). Whatever a tool
// returns or a model says is stored as events, tool call rows, results and engine step records: each such
// character must arrive replaced by U+FFFD, and the task must complete.
const REPLACED = '\uFFFD';
const SLOW = { timeout: 120_000 };

/** Every string of the value, keys included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => [key, ...stringsOf(child)]);
}

function assertStorable(value: unknown, where: string): void {
  for (const text of stringsOf(value)) {
    assert.ok(!text.includes('\u0000'), `${where} holds a NUL: ${JSON.stringify(text).slice(0, 200)}`);
    assert.ok(text.isWellFormed(), `${where} holds an unpaired surrogate: ${JSON.stringify(text).slice(0, 200)}`);
  }
}

/** Runs a task to its end and returns it with all its events (token deltas included), as a client reads them. */
async function runToTheEnd(gateway: Gateway, body: Record<string, unknown>, timeoutMs = 60_000, expectedStatus = 'TASK_STATUS_COMPLETED') {
  const submitted = await gateway.request('POST', '/api/v1/tasks', body);
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id, timeoutMs);
  const history = await gateway.request('GET', `/api/v1/tasks/${task.task_id}/events?include_partial=true&limit=200`);
  assert.equal(history.status, 200, history.text);
  const events: Array<{ type: string; message: string | null; payload: any }> = history.body.events;
  assert.equal(task.status, expectedStatus, `${task.error}`);
  assertStorable(task, 'the task');
  assertStorable(events, 'the events');
  const observations = events.filter((event) => event.type === 'TOOL_OBSERVATION').map((event) => event.payload);
  const invocations = events.filter((event) => event.type === 'TOOL_INVOKED').map((event) => event.payload);
  return { task, events, observations, invocations };
}

const pages: Record<string, string> = { '/nul.txt': 'before\u0000after, and a literal \\u0000 stays as it is' };
const standIn = http.createServer((request, response) => {
  const page = pages[request.url ?? ''];
  response.writeHead(page === undefined ? 404 : 200, { 'content-type': 'text/plain; charset=utf-8' }).end(page ?? 'not found');
});

const directory = mkdtempSync(path.join(os.tmpdir(), 'agentgate-unstorable-'));
const mcpConfig = path.join(directory, 'mcp.yaml');
// The offline search corpus, with one page whose text holds a NUL.
mkdirSync(path.join(directory, 'corpus'));
writeFileSync(path.join(directory, 'corpus', 'tides.md'),
  '---\ntitle: Tides\nurl: https://offline.agentgate.example/tides\n---\n# Tides\n\nTides rise\u0000twice a day along the coast.\n');
writeFileSync(mcpConfig, [
  'servers:',
  ...stdioTestServerLines(),
].join('\n'));
after(() => rmSync(directory, { recursive: true, force: true }));

describe('characters Postgres cannot store, through every tool', () => {
  // What is tested here is the text the tools return, not their time limits: a Python program gets a minute, which a
  // clean-clone run on a 2-core machine at about half its usual speed needed (one of three calls failed at the 10 s default).
  const env: Record<string, string> = { DEFAULT_TASK_MODE: 'auto', MCP_CONFIG: mcpConfig, SEARCH_CORPUS_DIR: path.join(directory, 'corpus'), PYTHON_TIMEOUT_MS: '60000' };
  let standInUrl = '';
  before(async () => {
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    const { port } = standIn.address() as AddressInfo;
    standInUrl = `http://127.0.0.1:${port}`;
    env.TOOLS_NETWORK_ALLOW = `127.0.0.1:${port}`;
  });
  after(() => standIn.close());
  const gateway = useGateway({ env });

  const runTask = (body: Record<string, unknown>, timeoutMs?: number) => runToTheEnd(gateway(), body, timeoutMs);

  it('web_fetch, web_crawl and web_search of pages with a NUL: the observations show U+FFFD, and a literal \\u0000 stays text', async () => {
    const { observations } = await runTask({
      query: 'Read the page', context: {
        role: 'research', mock_tool_calls: [[
          { tool: 'web_fetch', args: { url: `${standInUrl}/nul.txt` } },
          { tool: 'web_crawl', args: { url: `${standInUrl}/nul.txt`, max_depth: 0 } },
          { tool: 'web_search', args: { query: 'tides twice a day' } },
        ]],
      },
    });
    assert.equal(observations.length, 3);
    assert.equal(observations[0].output.content, `before${REPLACED}after, and a literal \\u0000 stays as it is`);
    assert.match(JSON.stringify(observations[1].output), new RegExp(`before${REPLACED}after`));
    assert.match(JSON.stringify(observations[2].output), new RegExp(`Tides rise${REPLACED}twice`));
  });

  it('python_executor printing a NUL, returning an unpaired surrogate and raising with both', SLOW, async () => {
    const code = (source: string) => ({ tool: 'python_executor', args: { code: source } });
    const { observations } = await runTask({
      query: 'Run these', context: {
        role: 'developer', mock_tool_calls: [[
          code('print("nul:\\x00 end")'),
          code('class Odd:\n    def __repr__(self):\n        return "lone:\\ud800 nul:\\x00"\nOdd()'),
          code('raise ValueError("bad:\\x00 \\udc00")'),
        ]],
      },
    }, 110_000);
    assert.equal(observations.length, 3);
    assert.ok(observations.every((observation) => observation.output !== undefined), JSON.stringify(observations));
    assert.equal(observations[0].output.stdout, `nul:${REPLACED} end\n`);
    assert.equal(observations[1].output.result, `lone:${REPLACED} nul:${REPLACED}`);
    assert.match(observations[2].output.error, new RegExp(`ValueError: bad:${REPLACED} ${REPLACED}`));
  });

  it('file_write whose arguments (the model\'s JSON, with \\u0000 and \\ud800 escapes) hold them, and file_read of the file', async () => {
    const written = await runTask({ query: 'Save it: file_write {"path": "notes.txt", "content": "a\\u0000b\\ud800c"}', context: { role: 'developer' } });
    assert.deepEqual(written.invocations.map((payload) => payload.args), [{ path: 'notes.txt', content: `a${REPLACED}b${REPLACED}c` }]);
    assert.equal(written.observations[0].error, undefined, JSON.stringify(written.observations[0]));
    const read = await runTask({
      query: 'Show it: file_read {"path": "notes.txt"}', session_id: written.task.session_id, context: { role: 'developer' },
    });
    assert.match(JSON.stringify(read.observations[0].output), new RegExp(`a${REPLACED}b${REPLACED}c`));
  });

  it('calculator echoing them in its error', async () => {
    const { observations } = await runTask({ query: 'Work it out: calculator {"expression": "1 +\\u0000 \\udc00"}', context: { role: 'generalist' } });
    assert.equal(observations.length, 1);
    assert.equal(typeof observations[0].error, 'string');
  });

  it('an MCP tool answering them: the observation and the model\'s answer that quotes it show U+FFFD', async () => {
    const outcome = await waitFor('the MCP server to offer its tools', async () => {
      const run = await runTask({ query: 'Call it', context: { role: 'generalist', mock_tool_calls: [{ tool: 'testsrv__unstorable', args: {} }] } });
      return run.observations[0]?.output === undefined ? undefined : run;
    }, 30_000);
    assert.equal(outcome.observations[0].output, `nul:${REPLACED} lone:${REPLACED} literal:\\u0000`);
    assert.match(outcome.task.result, new RegExp(`testsrv__unstorable: nul:${REPLACED} lone:${REPLACED} literal:\\\\u0000`));
  });

  it('the tools API answers a fetched NUL replaced', async () => {
    const answer = await gateway().request('POST', '/api/v1/tools/web_fetch/execute', { arguments: { url: `${standInUrl}/nul.txt` } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.success, true, answer.text);
    assertStorable(answer.body, 'the answer');
    assert.match(answer.body.output.content, new RegExp(`before${REPLACED}after`));
  });
});

describe('characters Postgres cannot store, from a model provider', () => {
  const env: Record<string, string> = {};
  const standIns: StandIn[] = [];
  before(async () => {
    const answering = await startStandIn({ answer: 'nul:\u0000 lone:\ud800 pair:😀 end' });
    const failing = await startStandIn({ failWithStatus: 500, failMessage: 'broken:\u0000 \udc00' });
    standIns.push(answering, failing);
    Object.assign(env, { OPENAI_COMPATIBLE_BASE_URL: `${answering.url}/v1`, OLLAMA_BASE_URL: `${failing.url}/v1` });
  });
  after(async () => { for (const standIn of standIns) await standIn.close(); });
  const gateway = useGateway({ env });

  it('an answer with them streams, completes and is stored with U+FFFD; a surrogate pair stays', async () => {
    const { task, events } = await runToTheEnd(gateway(), { query: 'Say it', provider_override: 'openai_compatible' });
    const expected = `nul:${REPLACED} lone:${REPLACED} pair:😀 end`;
    assert.equal(task.result, expected);
    const deltas = events.filter((event) => event.type === 'LLM_PARTIAL').map((event) => event.message).join('');
    assert.equal(deltas, expected);
  });

  it('a provider error quoting them fails the task with the reason, stored with U+FFFD', async () => {
    const { task } = await runToTheEnd(gateway(), { query: 'Fail', provider_override: 'ollama' }, 60_000, 'TASK_STATUS_FAILED');
    assert.match(task.error, new RegExp(`broken:${REPLACED} ${REPLACED}`));
  });
});
