import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };

describe('tools API', () => {
  const gateway = useGateway({ env });
  let alice: Account;
  let bob: Account;
  let carol: Account;
  let sessionUuid: string;
  const sessionId = 'alice-tools-session';

  const execute = (account: Account, name: string, body: unknown) =>
    gateway().request('POST', `/api/v1/tools/${name}/execute`, body, withKey(account));

  before(async () => {
    alice = await registerAccount(gateway(), 'alice');
    bob = await registerAccount(gateway(), 'bob');
    carol = await addMember(gateway(), alice, 'carol');
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'open a session', session_id: sessionId }, withKey(alice));
    assert.equal(task.status, 200, task.text);
    await waitForTask(gateway(), task.body.task_id, 20_000, withKey(alice));
    sessionUuid = (await gateway().sql.query('select session_id from tasks where id = $1', [task.body.task_id])).rows[0].session_id;
  });

  it('lists the tools a client may call, without the dangerous ones', async () => {
    const answer = await gateway().request('GET', '/api/v1/tools', undefined, withKey(alice));
    assert.equal(answer.status, 200, answer.text);
    const names = answer.body.tools.map((tool: { name: string }) => tool.name);
    assert.ok(names.includes('calculator') && names.includes('statistics'), names.join());
    assert.ok(!names.includes('bash'), 'bash is dangerous');
    const calculator = answer.body.tools.find((tool: { name: string }) => tool.name === 'calculator');
    assert.deepEqual(Object.keys(calculator).sort(), ['category', 'cost_per_use', 'description', 'name', 'parameters']);
    assert.deepEqual(calculator.parameters.required, ['expression']);
  });

  it('filters the list by category', async () => {
    const math = await gateway().request('GET', '/api/v1/tools?category=math', undefined, withKey(alice));
    assert.equal(math.status, 200, math.text);
    assert.ok(math.body.tools.length >= 2);
    assert.ok(math.body.tools.every((tool: { category: string }) => tool.category === 'math'));
    const none = await gateway().request('GET', '/api/v1/tools?category=no-such-category', undefined, withKey(alice));
    assert.deepEqual(none.body, { tools: [] });
  });

  it('shows one tool, 404 for an unknown one and 403 for a dangerous one', async () => {
    const calculator = await gateway().request('GET', '/api/v1/tools/calculator', undefined, withKey(alice));
    assert.equal(calculator.status, 200, calculator.text);
    assert.equal(calculator.body.name, 'calculator');
    assert.equal(calculator.body.category, 'math');
    assert.equal(calculator.body.cost_per_use, 0);
    assert.equal(typeof calculator.body.version, 'string');
    const unknown = await gateway().request('GET', '/api/v1/tools/no_such_tool', undefined, withKey(alice));
    assert.deepEqual([unknown.status, unknown.body], [404, { error: "Tool 'no_such_tool' not found" }]);
    const bash = await gateway().request('GET', '/api/v1/tools/bash', undefined, withKey(alice));
    assert.equal(bash.status, 403);
    assert.match(bash.body.error, /^Tool not available via direct execution/);
  });

  it('needs a credential', async () => {
    assert.equal((await gateway().request('GET', '/api/v1/tools')).status, 401);
    assert.equal((await gateway().request('POST', '/api/v1/tools/calculator/execute', { arguments: { expression: '1' } })).status, 401);
  });

  it('runs a tool and answers in Shannon\'s shape', async () => {
    const answer = await execute(alice, 'calculator', { arguments: { expression: '6 * 7' } });
    assert.equal(answer.status, 200, answer.text);
    const { execution_time_ms: executionTimeMs, ...rest } = answer.body;
    assert.ok(Number.isInteger(executionTimeMs) && executionTimeMs >= 0);
    assert.deepEqual(rest, {
      success: true, output: 42, text: '42', error: null,
      metadata: { tool: 'calculator', category: 'math', session_id: null },
      usage: { tokens: 0, cost_usd: 0 },
    });
    const statistics = await execute(alice, 'statistics', { arguments: { values: [1, 2, 3, 4], measures: ['mean', 'max'] } });
    assert.deepEqual(statistics.body.output, { mean: 2.5, max: 4 });
  });

  it('a tool that fails is a 200 with success false and its error', async () => {
    const answer = await execute(alice, 'calculator', { arguments: { expression: '2 +' } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.success, false);
    assert.equal(answer.body.output, null);
    assert.equal(answer.body.text, null);
    assert.match(answer.body.error, /Unexpected end of expression/);
  });

  it('refuses bad arguments and bad bodies with 400 before anything runs', async () => {
    const before = await usageRows(alice);
    const cases: Array<[unknown, string]> = [
      [{ arguments: {} }, 'arguments.expression is required'],
      [{}, 'arguments.expression is required'],
      [{ arguments: { expression: 42 } }, 'invalid arguments.expression: must be string'],
      [{ arguments: { expression: '1', shell: 'rm -rf /' } }, 'arguments.shell is not an argument of this tool'],
      [{ arguments: 'expression' }, 'invalid arguments: must be object'],
    ];
    for (const [body, message] of cases) {
      const answer = await execute(alice, 'calculator', body);
      assert.deepEqual([answer.status, answer.body], [400, { error: message }], JSON.stringify(body));
    }
    const statistics = await execute(alice, 'statistics', { arguments: { values: [1, 'two'] } });
    assert.deepEqual([statistics.status, statistics.body], [400, { error: 'invalid arguments.values.1: must be number' }]);
    const malformed = await gateway().requestRaw('POST', '/api/v1/tools/calculator/execute', '{"arguments": {', { 'content-type': 'application/json', ...withKey(alice) });
    assert.deepEqual([malformed.status, malformed.body], [400, { error: 'invalid JSON body' }]);
    const bodyless = await gateway().requestRaw('POST', '/api/v1/tools/calculator/execute', '', { 'content-type': 'application/json', ...withKey(alice) });
    assert.deepEqual([bodyless.status, bodyless.body], [400, { error: 'invalid body: must be object' }]);
    assert.equal(await usageRows(alice), before, 'nothing ran, nothing was charged');
  });

  it('refuses to run an unknown tool (404) or a dangerous one (403)', async () => {
    assert.equal((await execute(alice, 'no_such_tool', { arguments: {} })).status, 404);
    const bash = await execute(alice, 'bash', { arguments: { command: 'echo hi' } });
    assert.equal(bash.status, 403, bash.text);
  });

  it('records each call as a usage row of the caller, with no task', async () => {
    const before = await usageRows(alice);
    assert.equal((await execute(alice, 'calculator', { arguments: { expression: '1 + 1' } })).status, 200);
    assert.equal(await usageRows(alice), before + 1);
    const { rows } = await gateway().sql.query(
      `select task_id, tenant_id, session_id, agent_id, provider, model, total_tokens, cost_usd::float8 as cost_usd
       from usage_records where user_id = $1 order by id desc limit 1`, [alice.userId]);
    assert.deepEqual(rows[0], {
      task_id: null, tenant_id: alice.tenantId, session_id: null, agent_id: 'tool:calculator', provider: 'tool', model: 'calculator', total_tokens: 0, cost_usd: 0,
    });
  });

  it('runs in the caller\'s session, by custom id or UUID, and charges it there', async () => {
    for (const id of [sessionId, sessionUuid]) {
      const answer = await execute(alice, 'calculator', { arguments: { expression: '2 + 2' }, session_id: id });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.metadata.session_id, sessionUuid);
    }
    const { rows } = await gateway().sql.query(`select count(*)::int as calls from usage_records where session_id = $1 and agent_id = 'tool:calculator'`, [sessionUuid]);
    assert.equal(rows[0].calls, 2);
  });

  it('another tenant\'s session is not found (404); another user\'s in the tenant is forbidden (403)', async () => {
    for (const id of [sessionUuid, sessionId]) {
      const foreign = await execute(bob, 'calculator', { arguments: { expression: '1' }, session_id: id });
      assert.deepEqual([foreign.status, foreign.body], [404, { error: 'Session not found' }], id);
    }
    const colleague = await execute(carol, 'calculator', { arguments: { expression: '1' }, session_id: sessionUuid });
    assert.equal(colleague.status, 403, colleague.text);
    const unknown = await execute(alice, 'calculator', { arguments: { expression: '1' }, session_id: 'no-such-session' });
    assert.equal(unknown.status, 404);
  });

  const usageRows = async (account: Account): Promise<number> =>
    (await gateway().sql.query(`select count(*)::int as calls from usage_records where user_id = $1 and agent_id like 'tool:%'`, [account.userId])).rows[0].calls;
});
