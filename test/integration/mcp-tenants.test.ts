import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTestMcpServer } from '../fixtures/mcp-test-tools.ts';
import { registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

/** An MCP server over streamable HTTP on 127.0.0.1 that counts the tool calls it receives. */
async function startMcpServer(): Promise<{ url: string; calls: () => number }> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await createTestMcpServer().connect(transport);
  let calls = 0;
  const server = http.createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = text === '' ? undefined : JSON.parse(text);
    if (body?.method === 'tools/call') calls += 1;
    void transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => { server.closeAllConnections(); server.close(); });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, calls: () => calls };
}

const [shared, privateServer, unlisted] = [await startMcpServer(), await startMcpServer(), await startMcpServer()];
const directory = mkdtempSync(path.join(os.tmpdir(), 'agentgate-mcp-tenants-'));
const configFile = path.join(directory, 'mcp.yaml');
after(() => rmSync(directory, { recursive: true, force: true }));

function writeConfig(servers: Array<{ name: string; url: string; tenants?: string[] }>): void {
  writeFileSync(configFile, [servers.length === 0 ? 'servers: []' : 'servers:', ...servers.flatMap(({ name, url, tenants }) => [
    `  - name: ${name}`, '    transport: http', `    url: ${url}`, '    dangerous: false',
    ...(tenants ? [`    tenants: [${tenants.map((tenant) => JSON.stringify(tenant)).join(', ')}]`] : []),
  ])].join('\n'));
}

describe('MCP servers enabled per tenant', () => {
  const gateway = useGateway({ env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!', DEFAULT_TASK_MODE: 'auto', MCP_CONFIG: configFile } });
  let alice: Account;
  let bob: Account;

  const toolNames = async (account: Account) => {
    const listed = await gateway().request('GET', '/api/v1/tools', undefined, withKey(account));
    assert.equal(listed.status, 200, listed.text);
    return listed.body.tools.map((tool: { name: string }) => tool.name).filter((name: string) => name.includes('__')).sort();
  };
  const observationOf = async (account: Account, tool: string) => {
    const submitted = await gateway().request('POST', '/api/v1/tasks',
      { query: `call ${tool}`, context: { role: 'generalist', mock_tool_calls: [{ tool, args: { text: 'hi' } }] } }, withKey(account));
    assert.equal(submitted.status, 200, submitted.text);
    assert.equal((await waitForTask(gateway(), submitted.body.task_id, 20_000, withKey(account))).status, 'TASK_STATUS_COMPLETED');
    const { rows } = await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'`, [submitted.body.task_id]);
    return rows[0].payload;
  };

  before(async () => {
    // The tenants exist only once the gateway runs: the config naming Alice's tenant is written, then read at a restart.
    writeConfig([]);
    alice = await registerAccount(gateway(), 'alice');
    bob = await registerAccount(gateway(), 'bob');
    writeConfig([
      { name: 'shared', url: shared.url, tenants: ['*'] },
      { name: 'private', url: privateServer.url, tenants: [alice.tenantId] },
      { name: 'unlisted', url: unlisted.url },
    ]);
    await gateway().restart();
    await waitFor('the MCP servers to offer their tools', async () => ((await toolNames(alice)).length >= 8 ? true : undefined), 30_000);
  });

  it('the tools list shows each tenant the servers enabled for it; a server that names no tenant is enabled for none', async () => {
    const tools = ['echo', 'repeat', 'unstorable', 'wait'];
    assert.deepEqual(await toolNames(alice), [...tools.map((tool) => `private__${tool}`), ...tools.map((tool) => `shared__${tool}`)]);
    assert.deepEqual(await toolNames(bob), tools.map((tool) => `shared__${tool}`));
  });

  it('a tool of a server not enabled for the tenant answers exactly as an unknown tool: read, run, or called by an agent', async () => {
    for (const [method, suffix, body] of [['GET', '', undefined], ['POST', '/execute', { arguments: { text: 'hi' } }]] as const) {
      const hidden = await gateway().request(method, `/api/v1/tools/private__echo${suffix}`, body, withKey(bob));
      const unknown = await gateway().request(method, `/api/v1/tools/nowhere__echo${suffix}`, body, withKey(bob));
      assert.equal(hidden.status, 404, hidden.text);
      assert.deepEqual(hidden.body, { error: "Tool 'private__echo' not found" });
      assert.deepEqual(unknown.body, { error: "Tool 'nowhere__echo' not found" });
    }
    const hiddenCall = await observationOf(bob, 'private__echo');
    const unknownCall = await observationOf(bob, 'nowhere__echo');
    assert.equal(hiddenCall.error, 'tool private__echo is not allowed for role generalist');
    assert.equal(unknownCall.error, 'tool nowhere__echo is not allowed for role generalist');
    const unlistedCall = await observationOf(alice, 'unlisted__echo');
    assert.equal(unlistedCall.error, 'tool unlisted__echo is not allowed for role generalist');
    assert.equal(privateServer.calls() + unlisted.calls(), 0, 'no call reached a server the caller\'s tenant may not use');
  });

  it('the tenants it is enabled for use it, through the tools API and in tasks', async () => {
    const direct = await gateway().request('POST', '/api/v1/tools/private__echo/execute', { arguments: { text: 'direct' } }, withKey(alice));
    assert.equal(direct.status, 200, direct.text);
    assert.equal(direct.body.output, 'echo: direct', direct.text);
    assert.equal((await observationOf(alice, 'private__echo')).output, 'echo: hi');
    assert.equal((await observationOf(bob, 'shared__echo')).output, 'echo: hi');
    assert.equal(privateServer.calls(), 2);
  });
});
