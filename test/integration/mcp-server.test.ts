import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createDatabase, type Db } from '../../src/db/database.ts';
import { writeWorkspaceFile } from '../../src/tools/files/workspace-store.ts';
import { registerAccount, type Account } from '../helpers/accounts.ts';
import { useGateway, waitFor, type Gateway } from '../helpers/gateway.ts';

const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

async function connect(gateway: Gateway, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'agentgate-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const structured = (result: unknown) => (result as CallToolResult).structuredContent as any;
const errorText = (result: unknown) => {
  const call = result as CallToolResult;
  assert.equal(call.isError, true, JSON.stringify(call));
  return (call.content[0] as { text: string }).text;
};

describe('agentgate as an MCP server, through the MCP SDK\'s client', { timeout: 180_000 }, () => {
  const gateway = useGateway({ env: authEnv });
  let alice: Account;
  let bob: Account;
  let client: Client;
  let db: Db;
  before(async () => {
    alice = await registerAccount(gateway(), 'mcp-alice');
    bob = await registerAccount(gateway(), 'mcp-bob');
    client = await connect(gateway(), { 'x-api-key': alice.apiKey });
    db = createDatabase(gateway().databaseUrl, { size: 2, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 }).db;
  });
  after(async () => {
    await client?.close();
    await db?.destroy();
  });

  it('lists its tools and resource templates', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(),
      ['answer_approval', 'get_session', 'get_task', 'list_approvals', 'list_sessions', 'submit_task', 'wait_for_task']);
    const submit = tools.find((tool) => tool.name === 'submit_task')!;
    assert.deepEqual(submit.inputSchema.required, ['query']);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((template) => template.uriTemplate).sort(),
      ['agentgate://sessions/{session_id}/files', 'agentgate://sessions/{session_id}/files/{+path}', 'agentgate://tasks/{task_id}/result']);
  });

  it('submits a task, reports progress while waiting for it, and serves its result as a resource', async () => {
    const submitted = structured(await client.callTool({ name: 'submit_task', arguments: { query: 'Tell me about MCP', mode: 'simple', session_id: 'mcp-session' } }));
    assert.match(submitted.task_id, /^[0-9a-f-]{36}$/);
    assert.equal(submitted.session_id, 'mcp-session');
    const progress: Array<{ progress: number; message?: string }> = [];
    const waited = await client.callTool({ name: 'wait_for_task', arguments: { task_id: submitted.task_id } }, undefined, {
      onprogress: (notification) => progress.push(notification),
    });
    const task = structured(waited);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.match(task.result, /Tell me about MCP/);
    assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
    assert.match(progress[0].message ?? '', /^WORKFLOW_STARTED/);
    assert.ok(progress.some((entry) => /^WORKFLOW_COMPLETED/.test(entry.message ?? '')));
    assert.ok(progress.every((entry, index) => index === 0 || entry.progress > progress[index - 1].progress), 'progress only grows');

    const resource = await client.readResource({ uri: `agentgate://tasks/${submitted.task_id}/result` });
    const view = JSON.parse((resource.contents[0] as { text: string }).text);
    assert.equal(view.status, 'TASK_STATUS_COMPLETED');
    assert.equal(view.result, task.result);
    const read = structured(await client.callTool({ name: 'get_task', arguments: { task_id: submitted.task_id } }));
    assert.equal(read.result, task.result);

    const sessions = structured(await client.callTool({ name: 'list_sessions', arguments: {} }));
    assert.ok(sessions.sessions.some((session: any) => session.context?.external_id === 'mcp-session' || session.session_id === 'mcp-session' || session.external_id === 'mcp-session'),
      JSON.stringify(sessions.sessions));
    const session = structured(await client.callTool({ name: 'get_session', arguments: { session_id: 'mcp-session' } }));
    assert.equal(session.history.tasks[0].task_id, submitted.task_id);
  });

  it('a strategy runs the task as deep research', async () => {
    const submitted = structured(await client.callTool({ name: 'submit_task', arguments: { query: 'Which renewable sources give electricity day and night?', strategy: 'quick' } }));
    const task = structured(await client.callTool({ name: 'wait_for_task', arguments: { task_id: submitted.task_id, timeout_seconds: 120 } }));
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows } = await gateway().sql.query('select mode, context from tasks where id = $1', [submitted.task_id]);
    assert.deepEqual([rows[0].mode, rows[0].context.research_strategy], ['research', 'quick']);
  });

  it('a submission retried with the same idempotency_key answers the same task and creates no other', async () => {
    const call = () => client.callTool({ name: 'submit_task', arguments: { query: 'only once', idempotency_key: 'retry-me' } });
    const [first, second] = [structured(await call()), structured(await call())];
    assert.equal(first.task_id, second.task_id);
    const { rows } = await gateway().sql.query(`select count(*)::int as count from tasks where query = 'only once'`);
    assert.equal(rows[0].count, 1);
    // The key is the caller's own: another user with the same key gets a task of their own.
    const bobs = await connect(gateway(), { 'x-api-key': bob.apiKey });
    try {
      const other = structured(await bobs.callTool({ name: 'submit_task', arguments: { query: 'only once', idempotency_key: 'retry-me' } }));
      assert.notEqual(other.task_id, first.task_id);
    } finally {
      await bobs.close();
    }
  });

  it('serves a session\'s files as resources', async () => {
    const submitted = structured(await client.callTool({ name: 'submit_task', arguments: { query: 'files', session_id: 'mcp-files' } }));
    const { rows: [task] } = await gateway().sql.query('select session_id from tasks where id = $1', [submitted.task_id]);
    await writeWorkspaceFile(db, { sessionId: task.session_id, tenantId: alice.tenantId }, { maxFileBytes: 1000, maxBytes: 1000, maxFiles: 10 },
      'notes/plan.md', () => Buffer.from('step one\n'));
    const listing = await client.readResource({ uri: 'agentgate://sessions/mcp-files/files' });
    assert.deepEqual(JSON.parse((listing.contents[0] as { text: string }).text).files.map((file: any) => file.path), ['notes/plan.md']);
    const file = await client.readResource({ uri: 'agentgate://sessions/mcp-files/files/notes/plan.md' });
    assert.equal((file.contents[0] as { text: string }).text, 'step one\n');
  });

  it('answers an approval a task waits for', async () => {
    const submitted = structured(await client.callTool({ name: 'submit_task', arguments: { query: 'needs a yes', mode: 'simple', context: { require_approval: true } } }));
    const pending = await waitFor('the approval', async () => {
      const listed = structured(await client.callTool({ name: 'list_approvals', arguments: {} }));
      return listed.approvals.find((approval: any) => approval.workflow_id === submitted.task_id);
    });
    const answered = await client.callTool({ name: 'answer_approval', arguments: { task_id: submitted.task_id, approval_id: pending.approval_id, approved: true } });
    assert.notEqual(answered.isError, true, JSON.stringify(answered));
    const task = structured(await client.callTool({ name: 'wait_for_task', arguments: { task_id: submitted.task_id, timeout_seconds: 60 } }));
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
  });

  it('another tenant\'s task, session and files do not exist for the caller', async () => {
    const submitted = structured(await client.callTool({ name: 'submit_task', arguments: { query: 'private', session_id: 'alice-only' } }));
    const bobs = await connect(gateway(), { authorization: `Bearer ${bob.apiKey}` });
    try {
      assert.match(errorText(await bobs.callTool({ name: 'get_task', arguments: { task_id: submitted.task_id } })), /Task not found/);
      assert.match(errorText(await bobs.callTool({ name: 'wait_for_task', arguments: { task_id: submitted.task_id, timeout_seconds: 1 } })), /Task not found/);
      assert.match(errorText(await bobs.callTool({ name: 'get_session', arguments: { session_id: 'alice-only' } })), /Session not found/);
      await assert.rejects(bobs.readResource({ uri: `agentgate://tasks/${submitted.task_id}/result` }), /Task not found/);
      await assert.rejects(bobs.readResource({ uri: 'agentgate://sessions/alice-only/files' }), /Session not found/);
    } finally {
      await bobs.close();
    }
  });

  it('refuses a bad API key and a missing one', async () => {
    const unauthorized = (error: { code?: number }) => error.code === 401;
    await assert.rejects(connect(gateway(), { 'x-api-key': 'sk_live_not-a-key' }), unauthorized);
    await assert.rejects(connect(gateway(), { authorization: 'Bearer sk_live_not-a-key' }), unauthorized);
    await assert.rejects(connect(gateway(), {}), unauthorized);
    const raw = await fetch(`${gateway().url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    assert.equal(raw.status, 401);
  });

  it('each tool needs the scope its REST route needs: a read-only key reads but submits nothing', async () => {
    const key = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'read only', scopes: ['tasks:read'] }, { authorization: `Bearer ${alice.accessToken}` });
    assert.equal(key.status, 201, key.text);
    const reader = await connect(gateway(), { 'x-api-key': key.body.key });
    try {
      assert.match(errorText(await reader.callTool({ name: 'submit_task', arguments: { query: 'not allowed' } })), /missing scope tasks:write/);
      assert.match(errorText(await reader.callTool({ name: 'list_sessions', arguments: {} })), /missing scope sessions:read/);
      const listed = await reader.callTool({ name: 'list_approvals', arguments: {} });
      assert.notEqual(listed.isError, true);
    } finally {
      await reader.close();
    }
    const { rows } = await gateway().sql.query(`select count(*)::int as count from tasks where query = 'not allowed'`);
    assert.equal(rows[0].count, 0);
  });

  it('a tool call with invalid arguments is an error naming the field', async () => {
    const result = await client.callTool({ name: 'submit_task', arguments: { query: 'x', mode: 'chaotic' } });
    assert.match(errorText(result), /mode/);
  });
});
