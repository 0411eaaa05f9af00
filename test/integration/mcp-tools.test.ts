import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTestMcpServer } from '../fixtures/mcp-test-tools.ts';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { stdioTestServerLines } from '../fixtures/mcp-test-config.ts';

const directory = path.join(os.tmpdir(), `agentgate-mcp-${process.pid}`);
const pidFile = path.join(directory, 'server.pid');
const configFile = path.join(directory, 'mcp.yaml');
mkdirSync(directory, { recursive: true });
after(() => rmSync(directory, { recursive: true, force: true }));

/** The same tools over streamable HTTP, served from this process; answers as event streams, or as JSON bodies. */
async function serveOverHttp(enableJsonResponse: boolean): Promise<number> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse });
  await createTestMcpServer().connect(transport);
  const server = http.createServer((request, response) => { void transport.handleRequest(request, response); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  return (server.address() as AddressInfo).port;
}
writeConfig(await serveOverHttp(false), await serveOverHttp(true));

/** The gateway reads at most this much of one answer of an HTTP server (TOOLS_FETCH_MAX_BYTES). */
const MAX_ANSWER_BYTES = 65_536;

function writeConfig(httpPort: number, jsonPort: number): void {
  writeFileSync(configFile, [
    'servers:',
    ...stdioTestServerLines({ env: { MCP_TEST_PID_FILE: pidFile }, timeoutMs: 20_000 }),
    '  - name: remote',
    '    transport: http',
    `    url: http://127.0.0.1:${httpPort}/mcp`,
    '    timeout_ms: 5000',
    '    dangerous: false',
    "    tenants: ['*']",
    '  - name: remotejson',
    '    transport: http',
    `    url: http://127.0.0.1:${jsonPort}/mcp`,
    '    dangerous: false',
    "    tenants: ['*']",
  ].join('\n'));
}

describe('tools of an MCP server', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto', MCP_CONFIG: configFile, TOOLS_FETCH_MAX_BYTES: String(MAX_ANSWER_BYTES) } });
  const runTool = async (tool: string, args: Record<string, unknown>) => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: `call ${tool}`, context: { role: 'generalist', mock_tool_calls: [{ tool, args }] } });
    assert.equal(submitted.status, 200, submitted.text);
    return submitted.body.task_id as string;
  };
  const observationOf = async (taskId: string) => (await gateway().sql.query(
    `select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'`, [taskId])).rows[0]?.payload;

  it('an agent calls a tool of a streamable HTTP server', async () => {
    const observation = await waitFor('the HTTP server to offer its tools', async () => {
      const taskId = await runTool('remote__echo', { text: 'over http' });
      await waitForTask(gateway(), taskId);
      const observed = await observationOf(taskId);
      return observed?.output === 'echo: over http' ? observed : undefined;
    }, 30_000);
    assert.equal(observation.tool, 'remote__echo');
  });

  it('an answer of an HTTP server longer than TOOLS_FETCH_MAX_BYTES fails its call, and the server goes on answering', async () => {
    const callUntilOffered = (tool: string, args: Record<string, unknown>) => waitFor(`${tool} to be offered`, async () => {
      const taskId = await runTool(tool, args);
      await waitForTask(gateway(), taskId, 20_000);
      const observed = await observationOf(taskId);
      return observed && !/unavailable|unknown tool|not available/i.test(observed.error ?? '') ? observed : undefined;
    }, 30_000);
    const overJson = await callUntilOffered('remotejson__repeat', { text: 'x', times: MAX_ANSWER_BYTES });
    assert.equal(overJson.error, `MCP server remotejson answered more than ${MAX_ANSWER_BYTES} bytes (TOOLS_FETCH_MAX_BYTES)`);
    // An event stream is cut at the limit; the SDK does not tie the cut to the call, which ends at its time limit.
    const overStream = await callUntilOffered('remote__repeat', { text: 'x', times: MAX_ANSWER_BYTES });
    assert.match(overStream.error, /timed out/i);
    for (const server of ['remotejson', 'remote']) {
      const echoed = await callUntilOffered(`${server}__echo`, { text: 'still there' });
      assert.equal(echoed.output, 'echo: still there');
    }
  });

  it('an agent calls a tool of a stdio server, and killing the server mid-call gives an error observation, not a hang', async () => {
    const echoed = await waitFor('the MCP server to offer its tools', async () => {
      const taskId = await runTool('testsrv__echo', { text: 'hello' });
      await waitForTask(gateway(), taskId);
      const observation = await observationOf(taskId);
      return observation?.output === 'echo: hello' ? observation : undefined;
    }, 30_000);
    assert.equal(echoed.tool, 'testsrv__echo');

    const waiting = await runTool('testsrv__wait', { ms: 15_000 });
    await waitFor('the call to start', async () => (await gateway().sql.query(
      `select 1 from task_events where task_id = $1 and type = 'TOOL_INVOKED'`, [waiting])).rows[0]);
    const startedAt = Date.now();
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    const task = await waitForTask(gateway(), waiting, 10_000);
    assert.ok(Date.now() - startedAt < 8000, 'the task did not wait for the call\'s time limit');
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const observation = await observationOf(waiting);
    assert.match(observation.error, /closed|unavailable/i, JSON.stringify(observation));

    // The server is started again in the background, and its tools work again.
    await waitFor('the server to be back', async () => {
      const taskId = await runTool('testsrv__echo', { text: 'again' });
      await waitForTask(gateway(), taskId);
      return (await observationOf(taskId))?.output === 'echo: again' ? true : undefined;
    }, 30_000);
  });
});

