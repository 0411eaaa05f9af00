import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { addMember, registerAccount, withDangerousToolsKey, withKey, type Account } from '../helpers/accounts.ts';
import { bashSandboxMissing } from '../helpers/bash-sandbox.ts';
import { createTestDatabase, runRefused, startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const JWT_SECRET = `bash-sandbox-jwt-${randomBytes(12).toString('hex')}`;
const DATA_DIR_SECRET = `data-dir-secret-${randomBytes(12).toString('hex')}`;

/** The approval a task asked for, once announced. */
async function requestedApproval(gateway: Gateway, taskId: string): Promise<{ approval_id: string; reason: string; tools: string[] }> {
  const event = await waitFor(`task ${taskId} to ask for approval`, async () => (await gateway.sql.query(
    `select payload from task_events where task_id = $1 and type = 'APPROVAL_REQUESTED'`, [taskId])).rows[0]);
  return event.payload;
}

const decide = (gateway: Gateway, taskId: string, approvalId: string, headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
  gateway.request('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: approvalId, approved: true, ...extra }, headers);

async function bashOutput(gateway: Gateway, taskId: string): Promise<{ stdout: string; stderr: string; exit_code: number }> {
  const { rows } = await gateway.sql.query(`select output, error from tool_calls where task_id = $1 and tool = 'bash'`, [taskId]);
  assert.equal(rows.length, 1, 'the command ran once');
  assert.equal(rows[0].error, null);
  return rows[0].output;
}

/** A stand-in listening where a database would (TCP on 127.0.0.1, or a Unix socket): it counts who reaches it. */
async function listeningStandIn(where: number | string): Promise<{ connections: () => number; address: string }> {
  let connections = 0;
  const server = net.createServer((socket) => { connections += 1; socket.destroy(); });
  server.listen(where as never);
  await once(server, 'listening');
  after(() => server.close());
  const address = server.address();
  return { connections: () => connections, address: typeof address === 'string' ? address : String((address as net.AddressInfo).port) };
}

describe('bash, enabled: approved by another, run with nothing of the server in reach', { skip: bashSandboxMissing || undefined }, () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentgate-data-'));
  writeFileSync(path.join(dataDir, 'postgres-password'), DATA_DIR_SECRET);
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const gateway = useGateway({
    env: { GATEWAY_SKIP_AUTH: '0', JWT_SECRET, DEFAULT_TASK_MODE: 'auto', TOOLS_BASH_ENABLED: '1', DATA_DIR: dataDir, TOOLS_BASH_TIMEOUT_MS: '10000' },
  });
  let owner: Account;
  let admin: Account;
  let member: Account;
  /** The owner's key with the scope that lets it choose the developer role. */
  let ownerHeaders: Record<string, string>;

  before(async () => {
    owner = await registerAccount(gateway(), 'owner');
    admin = await addMember(gateway(), owner, 'admin', 'admin');
    member = await addMember(gateway(), owner, 'member');
    ownerHeaders = withKey(await withDangerousToolsKey(gateway(), owner));
  });

  const submitBash = async (command: string) => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', {
      query: 'run the command', context: { role: 'developer', mock_tool_calls: [{ tool: 'bash', args: { command } }] },
    }, ownerHeaders);
    assert.equal(submitted.status, 200, submitted.text);
    return submitted.body.task_id as string;
  };

  it('a member cannot choose a role with dangerous tools: 403 naming the scope, nothing created; nor can an admin give them the scope', async () => {
    const before = (await gateway().sql.query('select count(*)::int as count from tasks')).rows[0].count;
    for (const [role, tools] of [['developer', 'file_write, file_edit, file_delete, bash, python_executor'], ['data_analytics', 'python_executor']]) {
      const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'list the files', context: { role } }, withKey(member));
      assert.deepEqual([answer.status, answer.body], [403, { error: `Forbidden: role ${role} offers dangerous tools (${tools}); choosing it needs the tools:dangerous scope` }]);
    }
    const ownersPlainKey = await gateway().request('POST', '/api/v1/tasks', { query: 'x', context: { role: 'developer' } }, withKey(owner));
    assert.equal(ownersPlainKey.status, 403, 'the scope, not the role, decides: a key without it is refused too');
    assert.equal((await gateway().sql.query('select count(*)::int as count from tasks')).rows[0].count, before, 'no task was created');
    const analyst = await gateway().request('POST', '/api/v1/tasks', { query: 'summarise', context: { role: 'analysis' } }, withKey(member));
    assert.equal(analyst.status, 200, 'a role without dangerous tools needs no scope');

    const grant = await gateway().request('POST', '/api/v1/auth/api-keys', { name: 'dangerous', user_id: member.userId, scopes: ['tasks:write', 'tools:dangerous'] },
      { authorization: `Bearer ${admin.accessToken}`, 'x-tenant-id': owner.tenantId });
    assert.deepEqual([grant.status, grant.body], [403, { error: 'Forbidden: the member role does not allow scopes: tools:dangerous' }]);
  });

  it('the requester cannot approve their own bash call, a member cannot see it; an admin approves it and is recorded as the approver', async () => {
    const taskId = await submitBash('echo approved-run');
    const approval = await requestedApproval(gateway(), taskId);
    assert.deepEqual([approval.reason, approval.tools], ['its agents may run bash commands on the server', ['bash']]);

    const own = await decide(gateway(), taskId, approval.approval_id, ownerHeaders);
    assert.deepEqual([own.status, own.body], [403, { error: 'Forbidden: this approval guards dangerous tools; an approver other than the requester must approve it' }]);
    const byMember = await decide(gateway(), taskId, approval.approval_id, withKey(member));
    const unknown = await decide(gateway(), taskId, randomUUID(), withKey(member));
    assert.deepEqual([byMember.status, byMember.body], [404, { error: 'Approval not found' }]);
    assert.deepEqual([unknown.status, unknown.body], [byMember.status, byMember.body], 'a foreign approval answers as an unknown one');
    const membersList = await gateway().request('GET', '/api/v1/approvals', undefined, withKey(member));
    assert.deepEqual(membersList.body.approvals, []);
    assert.equal((await gateway().sql.query(`select count(*)::int as count from task_events where task_id = $1 and type like 'TOOL_%'`, [taskId])).rows[0].count, 0,
      'nothing ran before a decision');

    const adminsList = await gateway().request('GET', '/api/v1/approvals', undefined, withKey(admin));
    const listed = adminsList.body.approvals.find((item: any) => item.approval_id === approval.approval_id);
    assert.deepEqual([listed?.requested_by, listed?.tools, listed?.needs_other_approver], [owner.userId, ['bash'], true], 'an approver sees the tenant\'s approvals');
    const byAdmin = await decide(gateway(), taskId, approval.approval_id, withKey(admin), { approved_by: 'the security team' });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    const task = await waitForTask(gateway(), taskId, 30_000, ownerHeaders);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal((await bashOutput(gateway(), taskId)).stdout, 'approved-run\n');

    const { rows: [decision] } = await gateway().sql.query(`select payload from task_events where task_id = $1 and type = 'APPROVAL_DECISION'`, [taskId]);
    assert.deepEqual(decision.payload, { approval_id: approval.approval_id, approved: true, feedback: null, decided_by: admin.userId, approved_by_note: 'the security team' });
    const { rows: [stored] } = await gateway().sql.query('select decided_by, approved_by_note from approvals where id = $1', [approval.approval_id]);
    assert.deepEqual(stored, { decided_by: admin.userId, approved_by_note: 'the security team' });
    const { rows: audit } = await gateway().sql.query(`select user_id, tenant_id, details from audit_logs where event_type = 'approval_decided'`);
    assert.deepEqual(audit, [{
      user_id: admin.userId, tenant_id: owner.tenantId,
      details: { approval_id: approval.approval_id, task_id: taskId, approved: true, approved_by_note: 'the security team' },
    }]);
  });

  it('the command cannot read the server\'s environment or DATA_DIR, see its processes, or reach the database over TCP or a socket', async () => {
    const databasePort = new URL(gateway().databaseUrl).port;
    const tcp = await listeningStandIn(0);
    const socketDirectory = mkdtempSync(path.join(tmpdir(), 'agentgate-socket-'));
    after(() => rmSync(socketDirectory, { recursive: true, force: true }));
    const socket = await listeningStandIn(path.join(socketDirectory, '.s.PGSQL.5432'));
    const script = [
      'echo "[server environ]"; cat /proc/$PPID/environ /proc/1/environ 2>&1 | tr "\\0" "\\n"; env',
      `echo "[data dir]"; ls -la ${dataDir}; cat ${dataDir}/postgres-password`,
      'echo "[processes]"; ls /proc | grep -c "^[0-9]*$"',
      `echo "[database]"; (exec 3<>/dev/tcp/127.0.0.1/${databasePort} && echo CONNECTED-DATABASE)`,
      `(exec 3<>/dev/tcp/127.0.0.1/${tcp.address} && echo CONNECTED-TCP)`,
      `curl -s --max-time 3 --unix-socket ${socket.address} http://database/ && echo CONNECTED-SOCKET`,
      `psql -h ${socketDirectory} -p 5432 -c 'select 1' 2>&1; echo psql-exit=$?`,
      'echo "[who]"; id -u',
    ].join('\n');
    const taskId = await submitBash(script);
    const approval = await requestedApproval(gateway(), taskId);
    assert.equal((await decide(gateway(), taskId, approval.approval_id, withKey(admin))).status, 200);
    assert.equal((await waitForTask(gateway(), taskId, 30_000, ownerHeaders)).status, 'TASK_STATUS_COMPLETED');
    const { stdout, stderr } = await bashOutput(gateway(), taskId);
    const everything = stdout + stderr;
    for (const secret of [JWT_SECRET, DATA_DIR_SECRET, 'JWT_SECRET', 'DATABASE_URL', 'postgres://', new URL(gateway().databaseUrl).pathname.slice(1)]) {
      assert.ok(!everything.includes(secret), `the command saw ${secret}:\n${everything}`);
    }
    assert.match(stderr, new RegExp(`ls: cannot access '${dataDir}': No such file or directory`));
    const processes = Number(/\[processes\]\n(\d+)/.exec(stdout)?.[1]);
    assert.ok(processes <= 5, `${processes} processes in view`);
    assert.doesNotMatch(everything, /CONNECTED/);
    assert.match(stdout, /psql-exit=2/);
    assert.deepEqual([tcp.connections(), socket.connections()], [0, 0], 'no connection reached the host');
    assert.match(stdout, /\[who\]\n65534\n/);
  });
});

test('TOOLS_BASH_ENABLED=1 without a usable bubblewrap stops start-up, saying what to install; a gateway-only process, which runs no tool, starts', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const withoutSandbox = { TOOLS_BASH_ENABLED: '1', BWRAP_PATH: '/nonexistent/bwrap' };
  const refused = await runRefused(databaseUrl, withoutSandbox);
  assert.equal(refused.code, 1);
  assert.match(refused.output, /TOOLS_BASH_ENABLED=1, but the bash sandbox does not work \(\/nonexistent\/bwrap: .*\)\. Install bubblewrap 0\.8 or later \(Debian, Ubuntu: apt-get install bubblewrap\)/);
  const gatewayOnly = await startGateway(t, { databaseUrl, env: withoutSandbox, args: ['--role', 'gateway'] });
  assert.equal((await gatewayOnly.request('GET', '/health')).status, 200);
});

