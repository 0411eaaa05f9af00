import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it, test } from 'node:test';
import { createDatabase, type Db } from '../../src/db/database.ts';
import { loadConfig } from '../../src/config.ts';
import { createToolRegistry } from '../../src/tools/create-registry.ts';
import { FILE_TOOLS } from '../../src/tools/files/file-tools.ts';
import { writeWorkspaceFile } from '../../src/tools/files/workspace-store.ts';
import type { ToolContext } from '../../src/tools/registry.ts';
import { addMember, registerAccount, withDangerousToolsKey, withKey, type Account } from '../helpers/accounts.ts';
import { startGateway, useGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';

type Observation = { tool: string; output?: any; error?: string };

interface TaskRun {
  task: any;
  sessionUuid: string;
  observations: Observation[];
}

/** Runs a role task in the session with scripted tool calls (one entry per model turn) and returns its tool observations. */
async function runTask(gateway: Gateway, sessionId: string, role: string, toolCalls: unknown[], headers: Record<string, string> = {}): Promise<TaskRun> {
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'Work with the files.', session_id: sessionId, context: { role, mock_tool_calls: toolCalls } }, headers);
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id, 30_000, headers);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const { rows } = await gateway.sql.query(
    "select e.payload from task_events e where e.task_id = $1 and e.type = 'TOOL_OBSERVATION' order by e.seq", [task.task_id]);
  const session = await gateway.sql.query('select session_id from tasks where id = $1', [task.task_id]);
  return { task, sessionUuid: session.rows[0].session_id, observations: rows.map((row) => row.payload) };
}

const write = (path: string, content: string, append?: boolean) => ({ tool: 'file_write', args: { path, content, ...(append ? { append } : {}) } });
const read = (path: string, extra: Record<string, unknown> = {}) => ({ tool: 'file_read', args: { path, ...extra } });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('a file written by one task is read by the next task of the session, after a restart, and through another process', async (t) => {
  const env = { DEFAULT_TASK_MODE: 'auto' };
  const first = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'files-a' } });
  const written = await runTask(first, 'durable-notes', 'developer', [write('notes/plan.md', 'step one\nstep two\n')]);
  assert.deepEqual(written.observations.map((observation) => [observation.tool, observation.error, observation.output?.created]), [['file_write', undefined, true]]);
  assert.equal(written.observations[0].output.sha256, sha256('step one\nstep two\n'));

  const expectPlan = (run: TaskRun) => {
    assert.equal(run.sessionUuid, written.sessionUuid);
    assert.equal(run.observations[0].error, undefined);
    assert.equal(run.observations[0].output.content, 'step one\nstep two');
    assert.equal(run.observations[0].output.total_lines, 2);
    assert.match(run.task.result, /step one/, 'what the tool read reached the model');
  };
  expectPlan(await runTask(first, 'durable-notes', 'developer', [read('notes/plan.md')]));

  await first.restart();
  expectPlan(await runTask(first, 'durable-notes', 'developer', [read('notes/plan.md')]));

  const second = await startGateway(t, { databaseUrl: first.databaseUrl, env: { ...env, EXECUTOR_ID: 'files-b' } });
  await first.kill('SIGTERM');
  const listed = await runTask(second, 'durable-notes', 'developer', [[{ tool: 'file_list', args: {} }, read('notes/plan.md')]]);
  assert.deepEqual(listed.observations[0].output.files.map((file: any) => [file.path, file.size]), [['notes/plan.md', 18]]);
  expectPlan({ ...listed, observations: listed.observations.slice(1) });
});

describe('the session workspace', () => {
  const auth = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };
  const quotas = { WORKSPACE_MAX_FILE_BYTES: '100', WORKSPACE_MAX_BYTES: '150', WORKSPACE_MAX_FILES: '3' };
  const gateway = useGateway({ env: { ...auth, ...quotas, DEFAULT_TASK_MODE: 'auto' } });
  let alice: Account;
  let bob: Account;
  let carol: Account;

  before(async () => {
    // Her tasks choose the developer role, whose file tools are dangerous: her key has the scope that needs.
    alice = await withDangerousToolsKey(gateway(), await registerAccount(gateway(), 'alice'));
    bob = await registerAccount(gateway(), 'bob');
    carol = await addMember(gateway(), alice, 'carol');
  });

  const filesOf = async (sessionUuid: string) => (await gateway().sql.query(
    'select path, size, sha256 from session_files where session_id = $1 order by path', [sessionUuid])).rows;

  it('a write over a quota is an error observation and writes nothing', async () => {
    const eighty = 'x'.repeat(80);
    const first = await runTask(gateway(), 'quotas', 'developer', [[write('a.txt', eighty), write('big.txt', 'y'.repeat(101))]], withKey(alice));
    assert.equal(first.observations[0].error, undefined);
    assert.match(first.observations[1].error!, /^big\.txt would be 101 bytes: a workspace file may hold at most 100 bytes$/);

    const second = await runTask(gateway(), 'quotas', 'developer', [[write('b.txt', eighty), write('a.txt', 'z'.repeat(30), true)]], withKey(alice));
    assert.match(second.observations[0].error!, /the workspace would hold 160 bytes, the most it may hold is 150/);
    assert.match(second.observations[1].error!, /a\.txt would be 110 bytes/);

    const third = await runTask(gateway(), 'quotas', 'developer', [[write('c.txt', 'c'), write('d.txt', 'd'), write('e.txt', 'e')]], withKey(alice));
    assert.deepEqual(third.observations.map((observation) => observation.error === undefined), [true, true, false]);
    assert.match(third.observations[2].error!, /^the workspace holds 3 files and may hold at most 3: delete files to make room$/);

    assert.deepEqual(await filesOf(first.sessionUuid), [
      { path: 'a.txt', size: 80, sha256: sha256(eighty) },
      { path: 'c.txt', size: 1, sha256: sha256('c') },
      { path: 'd.txt', size: 1, sha256: sha256('d') },
    ]);
  });

  it('an escape attempt through a tool is refused and writes nothing', async () => {
    const run = await runTask(gateway(), 'escapes', 'developer', [[write('../outside.txt', 'x'), write('/etc/passwd', 'x')]], withKey(alice));
    assert.match(run.observations[0].error!, /invalid workspace path "\.\.\/outside\.txt": it contains "\.\."/);
    assert.match(run.observations[1].error!, /it is absolute/);
    assert.deepEqual(await filesOf(run.sessionUuid), []);
  });

  it('the session files API lists and downloads the workspace; another user gets 403 and another tenant 404', async () => {
    const content = 'Résumé: done\n';
    const run = await runTask(gateway(), 'api-files', 'developer', [[write('reports/résumé 1.md', content), write('a.txt', 'a')]], withKey(alice));
    await gateway().sql.query(`insert into session_files (session_id, path, content, is_text) values ($1, 'image.bin', '\\x00ff10'::bytea, false)`, [run.sessionUuid]);

    for (const id of ['api-files', run.sessionUuid]) {
      const listed = await gateway().request('GET', `/api/v1/sessions/${id}/files`, undefined, withKey(alice));
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(listed.body.files.map((file: any) => [file.path, file.size, file.content_type]), [
        ['a.txt', 1, 'text/plain; charset=utf-8'], ['image.bin', 3, 'application/octet-stream'], ['reports/résumé 1.md', Buffer.byteLength(content), 'text/plain; charset=utf-8'],
      ]);
      assert.deepEqual([listed.body.session_id, listed.body.total_count, listed.body.total_bytes], [run.sessionUuid, 3, 4 + Buffer.byteLength(content)]);
      assert.equal(listed.body.files[2].sha256, sha256(content));
    }
    const paged = await gateway().request('GET', '/api/v1/sessions/api-files/files?limit=1&offset=1', undefined, withKey(alice));
    assert.deepEqual(paged.body.files.map((file: any) => file.path), ['image.bin']);

    const download = await fetch(`${gateway().url}/api/v1/sessions/api-files/files/reports/${encodeURIComponent('résumé 1.md')}`, { headers: withKey(alice) });
    assert.equal(download.status, 200);
    assert.equal(await download.text(), content);
    assert.equal(download.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(download.headers.get('content-disposition'), "attachment; filename=\"r_sum__1.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9%201.md");
    assert.equal(download.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(download.headers.get('etag'), `"${sha256(content)}"`);

    const binary = await fetch(`${gateway().url}/api/v1/sessions/${run.sessionUuid}/files/image.bin`, { headers: withKey(alice) });
    assert.equal(binary.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual([...new Uint8Array(await binary.arrayBuffer())], [0x00, 0xff, 0x10]);

    const status = async (path: string, account: Account) => (await gateway().request('GET', path, undefined, withKey(account))).status;
    const base = `/api/v1/sessions/${run.sessionUuid}/files`;
    assert.equal(await status(`${base}/missing.txt`, alice), 404);
    for (const [escape, reason] of [['..%2F..%2Fetc%2Fpasswd', /contains "\.\."/], ['a%00.txt', /NUL/], ['%252e%252e/x', /percent-encoded/]] as const) {
      const refused = await gateway().request('GET', `${base}/${escape}`, undefined, withKey(alice));
      assert.equal(refused.status, 400, escape);
      assert.match(refused.body.error, reason);
    }
    for (const path of [base, `${base}/a.txt`]) {
      assert.equal(await status(path, bob), 404, `another tenant: ${path}`);
      assert.equal(await status(path, carol), 403, `another user of the tenant: ${path}`);
    }
    assert.equal(await status('/api/v1/sessions/api-files/files', bob), 404, 'a custom id names only the caller\'s own sessions');
  });

  it('the files as Shannon\'s Python SDK reads them: a listing of a directory with name, is_dir and size_bytes; a download as JSON', async () => {
    const run = await runTask(gateway(), 'sdk-files', 'developer', [[write('reports/summary.md', 'All done.\n'), write('top.txt', 'top')]], withKey(alice));
    await gateway().sql.query(`insert into session_files (session_id, path, content, is_text) values ($1, 'reports/chart.bin', '\\x00ff10'::bytea, false)`, [run.sessionUuid]);
    const listed = await gateway().request('GET', '/api/v1/sessions/sdk-files/files?path=reports', undefined, withKey(alice));
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.success, true);
    assert.deepEqual(listed.body.files.map((file: any) => [file.name, file.path, file.is_dir, file.size_bytes]), [
      ['chart.bin', 'reports/chart.bin', false, 3], ['summary.md', 'reports/summary.md', false, 10],
    ]);
    assert.deepEqual([listed.body.total_count, listed.body.total_bytes], [2, 13], 'the totals of the directory listed');
    const escape = await gateway().request('GET', '/api/v1/sessions/sdk-files/files?path=../x', undefined, withKey(alice));
    assert.equal(escape.status, 400);
    assert.match(escape.body.error, /contains "\.\."/);

    // The SDK sends Content-Type: application/json on every request and httpx accepts anything by default.
    const asTheSdk = { ...withKey(alice), 'content-type': 'application/json', accept: '*/*' };
    const text = await fetch(`${gateway().url}/api/v1/sessions/sdk-files/files/reports/summary.md`, { headers: asTheSdk });
    assert.equal(text.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(text.headers.get('vary'), 'Accept, Content-Type');
    assert.deepEqual(await text.json(), { success: true, path: 'reports/summary.md', content: 'All done.\n', encoding: 'utf-8', content_type: 'text/plain; charset=utf-8', size_bytes: 10 });
    const binary = await fetch(`${gateway().url}/api/v1/sessions/sdk-files/files/reports/chart.bin`, { headers: { ...withKey(alice), accept: 'application/json' } });
    assert.deepEqual(await binary.json(), { success: true, path: 'reports/chart.bin', content: 'AP8Q', encoding: 'base64', content_type: 'application/octet-stream', size_bytes: 3 });
    const bytes = await fetch(`${gateway().url}/api/v1/sessions/sdk-files/files/reports/summary.md`, { headers: { ...withKey(alice), accept: 'text/plain, */*' } });
    assert.equal(await bytes.text(), 'All done.\n', 'a client that does not ask for JSON gets the bytes');
  });

  // No role preset offers file_edit or file_delete yet: they are called here as an agent's loop calls them.
  describe('the file tools on the gateway\'s database', () => {
    let db: Db;
    const tools = createToolRegistry([...FILE_TOOLS]);
    before(() => { db = createDatabase(gateway().databaseUrl, { size: 10, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 }).db; });
    after(async () => db.destroy());

    const contextOf = (sessionId: string): ToolContext => ({
      taskId: null, sessionId, tenantId: alice.tenantId, userId: alice.userId, signal: new AbortController().signal, db, settings: loadConfig(quotas),
    });

    it('a developer writes, a generalist searches; edit, read by lines, list and delete work on what they left', async () => {
      const source = 'const a = 1;\nconst b = 2;\n// b is two\n';
      const written = await runTask(gateway(), 'editing', 'developer', [[write('src/app.ts', source), write('docs/notes.md', 'A note about b.\n')]], withKey(alice));
      const context = contextOf(written.sessionUuid);
      assert.deepEqual(await tools.invoke('file_edit', { path: 'src/app.ts', old_text: 'b = 2', new_text: 'b = 3' }, context),
        { output: { path: 'src/app.ts', size: source.length, sha256: sha256(source.replace('b = 2', 'b = 3')), line: 2 } });

      const searched = await runTask(gateway(), 'editing', 'generalist', [[
        { tool: 'file_search', args: { pattern: '^const \\w+ = 3', regex: true } },
        { tool: 'file_search', args: { pattern: 'B', ignore_case: true, directory: 'docs' } },
        { tool: 'file_search', args: { pattern: '(', regex: true } },
      ]], withKey(alice));
      const [regexSearch, textSearch, badPattern] = searched.observations;
      assert.deepEqual(regexSearch.output, { matches: [{ path: 'src/app.ts', line: 2, text: 'const b = 3;' }] });
      assert.deepEqual(textSearch.output, { matches: [{ path: 'docs/notes.md', line: 1, text: 'A note about b.' }] });
      assert.match(badPattern.error!, /invalid regular expression/);

      assert.match((await tools.invoke('file_edit', { path: 'src/app.ts', old_text: 'const', new_text: 'let' }, context)).error!,
        /old_text occurs more than once in src\/app\.ts/);
      const listing = (await tools.invoke('file_list', { directory: 'src' }, context)).output as any;
      assert.deepEqual([listing.directory, listing.total_files, listing.files.map((file: any) => file.path)], ['src', 1, ['src/app.ts']]);
      const slice = (await tools.invoke('file_read', { path: 'src/app.ts', offset: 1, limit: 1 }, context)).output as any;
      assert.deepEqual([slice.content, slice.first_line, slice.next_offset, slice.total_lines], ['const b = 3;', 2, 2, 3]);
      assert.deepEqual(await tools.invoke('file_delete', { path: 'docs/notes.md' }, context), { output: { path: 'docs/notes.md', deleted: true } });
      assert.deepEqual(await tools.invoke('file_read', { path: 'docs/notes.md' }, context), { error: 'no such file: docs/notes.md' });
    });

    it('a binary file is refused by file_read, which reads text only', async () => {
      const { sessionUuid } = await runTask(gateway(), 'binary', 'developer', [], withKey(alice));
      await gateway().sql.query(`insert into session_files (session_id, path, content, is_text) values ($1, 'shot.png', '\\x89504e4700'::bytea, false)`, [sessionUuid]);
      assert.match((await tools.invoke('file_read', { path: 'shot.png' }, contextOf(sessionUuid))).error!, /shot\.png is a binary file \(5 bytes\)/);
    });

    it('writes of one workspace take turns: the file quota holds exactly', async () => {
      const { sessionUuid } = await runTask(gateway(), 'concurrent', 'developer', [], withKey(alice));
      const scope = { sessionId: sessionUuid, tenantId: alice.tenantId };
      const quota = { maxFileBytes: 100, maxBytes: 1000, maxFiles: 3 };
      const writes = await Promise.allSettled(Array.from({ length: 10 }, (_, index) =>
        writeWorkspaceFile(db, scope, quota, `f${index}.txt`, () => Buffer.from(String(index)))));
      assert.equal(writes.filter((outcome) => outcome.status === 'fulfilled').length, 3);
      assert.equal((await filesOf(sessionUuid)).length, 3);
    });

    it('appends to one file made at once lose none', async () => {
      const { sessionUuid } = await runTask(gateway(), 'appends', 'developer', [], withKey(alice));
      const scope = { sessionId: sessionUuid, tenantId: alice.tenantId };
      const quota = { maxFileBytes: 100, maxBytes: 1000, maxFiles: 3 };
      await Promise.all(Array.from({ length: 10 }, () =>
        writeWorkspaceFile(db, scope, quota, 'log.txt', (current) => Buffer.concat([current?.content ?? Buffer.alloc(0), Buffer.from('x')]))));
      assert.deepEqual(await filesOf(sessionUuid), [{ path: 'log.txt', size: 10, sha256: sha256('x'.repeat(10)) }]);
    });

    it('another tenant\'s scope cannot write into the session', async () => {
      const { sessionUuid } = await runTask(gateway(), 'foreign', 'developer', [], withKey(alice));
      await assert.rejects(writeWorkspaceFile(db, { sessionId: sessionUuid, tenantId: bob.tenantId }, { maxFileBytes: 10, maxBytes: 10, maxFiles: 1 }, 'x', () => Buffer.from('x')),
        /does not exist: it has no workspace/);
    });
  });
});
