import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createDatabase, type Db } from '../../src/db/database.ts';
import type { Deps } from '../../src/deps.ts';
import { createEventHub, type EventHub } from '../../src/events/event-hub.ts';
import { createGroupCommitter } from '../../src/events/group-commit.ts';
import { loadModelCatalog } from '../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../src/llm/provider-registry.ts';
import { calculatorTool } from '../../src/tools/calculator.ts';
import { createToolRegistry } from '../../src/tools/create-registry.ts';
import type { ToolDefinition } from '../../src/tools/registry.ts';
import type { AgentCall } from '../../src/workflows/agent-calls/call-agent.ts';
import { roleToolSet } from '../../src/workflows/agent-calls/role-tools.ts';
import { runAgent } from '../../src/workflows/agent-calls/run-agent.ts';
import { reserveTokensWithin, settleTokens } from '../../src/workflows/agent-calls/token-budget.ts';
import { parseTaskSettings } from '../../src/workflows/runtime/task-settings.ts';
import type { TaskSnapshot } from '../../src/workflows/runtime/task-snapshot.ts';
import { useGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';

type EventRow = { type: string; agent_id: string | null; message: string; payload: Record<string, any> | null };

async function toolEvents(gateway: Gateway, taskId: string): Promise<EventRow[]> {
  const { rows } = await gateway.sql.query(
    "select type, agent_id, message, payload from task_events where task_id = $1 and type like 'TOOL_%' order by seq", [taskId]);
  return rows;
}

const calculate = (expression: string) => ({ tool: 'calculator', args: { expression } });

// These go through the router: a task with `context.role` runs one agent with the role's preset tools.
describe('tool calls of a role task', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto' } });

  async function runRoleTask(role: string, toolCalls: unknown[], query = 'What is 2*(3+4)?') {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query, context: { role, mock_tool_calls: toolCalls } });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id);
    return { task, events: await toolEvents(gateway(), submitted.body.task_id) };
  }

  it('a generalist calls the calculator: TOOL_INVOKED, then TOOL_OBSERVATION with 14, and the answer uses it', async () => {
    const { task, events } = await runRoleTask('generalist', [calculate('2*(3+4)')]);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.deepEqual(events.map((event) => event.type), ['TOOL_INVOKED', 'TOOL_OBSERVATION']);
    const [invoked, observed] = events;
    assert.deepEqual(invoked.payload, { tool: 'calculator', call_id: 'mock-call-1-1', args: { expression: '2*(3+4)' } });
    assert.match(invoked.message, /calculator/);
    assert.equal(observed.agent_id, invoked.agent_id);
    assert.equal(observed.payload!.output, 14);
    assert.equal(observed.payload!.cost_usd, 0);
    assert.equal(typeof observed.payload!.duration_ms, 'number');
    assert.match(task.result, /Tool results: calculator: 14\./);
  });

  it('a call outside the role preset is refused and told to the model; the task completes', async () => {
    const { task, events } = await runRoleTask('analysis', [calculate('2*(3+4)')]);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.deepEqual(events.map((event) => event.type), ['TOOL_OBSERVATION']);
    assert.deepEqual(events[0].payload, {
      tool: 'calculator', call_id: 'mock-call-1-1', error: 'tool calculator is not allowed for role analysis', refused: true, duration_ms: 0, cost_usd: 0,
    });
    assert.match(task.result, /Tool results: calculator: tool calculator is not allowed for role analysis/);
  });

  it('two failed calls in a row end the loop; the model is asked for its answer and the task completes', async () => {
    const { task, events } = await runRoleTask('generalist', [calculate('2 +'), calculate('x = 1'), calculate('1 + 1')]);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const observed = events.filter((event) => event.type === 'TOOL_OBSERVATION');
    assert.equal(observed.length, 2, 'the third scripted call is never made');
    assert.ok(observed.every((event) => typeof event.payload!.error === 'string'));
    assert.match(task.result, /Tool results: calculator: Unexpected end of expression.*; calculator: not allowed in a calculation: assignment\./);
  });

  it('six scripted calls, one a turn, stop at the limit of three turns with tool calls', async () => {
    const { task, events } = await runRoleTask('generalist', Array.from({ length: 6 }, (_, index) => calculate(`${index} + 1`)));
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const invoked = events.filter((event) => event.type === 'TOOL_INVOKED');
    assert.ok(invoked.length <= 5);
    assert.deepEqual(invoked.map((event) => event.payload!.args.expression), ['0 + 1', '1 + 1', '2 + 1']);
    const { rows } = await gateway().sql.query('select count(*)::int as calls from usage_records where task_id = $1', [task.task_id]);
    assert.equal(rows[0].calls, 4, 'three turns with tool calls and the last turn without tools');
  });

  it('seven calls asked for in one turn: five run, the rest are not, and the task completes', async () => {
    const { task, events } = await runRoleTask('generalist', [Array.from({ length: 7 }, (_, index) => calculate(`${index} * 2`))]);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(events.filter((event) => event.type === 'TOOL_INVOKED').length, 5);
  });
});

// The loop itself, run in this process against a real database: re-runs, the call limit, budgets, cancel.
describe('the tool loop of one agent', () => {
  const gateway = useGateway();
  let db: Db;
  let hub: EventHub;
  let closeDatabase: () => Promise<void>;
  let counterRuns = 0;

  const counter: ToolDefinition = {
    name: 'counter', description: 'Counts its runs', category: 'test', costPerUseUsd: 0.25, dangerous: false, effects: 'none',
    parameters: { type: 'object', properties: {}, additionalProperties: true },
    execute: async () => ++counterRuns,
  };
  const spendBudget: ToolDefinition = {
    ...counter, name: 'spend_budget', costPerUseUsd: 0,
    execute: async (_input, context) => {
      await db.updateTable('tasks').set({ token_budget: 1 }).where('id', '=', context.taskId).execute();
      return 'budget lowered';
    },
  };
  const hang: ToolDefinition = { ...counter, name: 'hang', execute: (_input, context) => new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(new Error('aborted')))) };

  before(async () => {
    const url = gateway().databaseUrl;
    const created = createDatabase(url, { size: 4, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
    db = created.db;
    const logger = pino({ level: 'silent' });
    hub = await createEventHub(url, logger);
    closeDatabase = async () => {
      await hub.close();
      await db.destroy();
    };
  });
  after(async () => closeDatabase());

  function depsFor(): Deps {
    const logger = pino({ level: 'silent' });
    const config = loadConfig({ DATABASE_URL: gateway().databaseUrl });
    return {
      config, db, logger, events: hub,
      models: createModelRegistry(loadModelCatalog(config.modelsConfigPath), {}),
      tools: createToolRegistry([calculatorTool, counter, spendBudget, hang]),
      appends: createGroupCommitter({ db, hub, logger, asyncPartials: false }),
    } as unknown as Deps;
  }

  /**
   * A running task for the loop to write to as its own, beside a finished one of the gateway's (whose tenant, user
   * and session it shares): nothing is appended to a task after its STREAM_END.
   */
  async function taskWith(toolCalls: unknown[]): Promise<TaskSnapshot> {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'count for me' });
    await waitForTask(gateway(), submitted.body.task_id);
    const { rows: [{ id }] } = await gateway().sql.query(`insert into tasks (id, tenant_id, user_id, session_id, query, status, started_at)
      select gen_random_uuid(), tenant_id, user_id, session_id, query, 'RUNNING', now() from tasks where id = $1 returning id`, [submitted.body.task_id]);
    const row = await db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const context = { mock_tool_calls: toolCalls };
    return {
      id: row.id, tenantId: row.tenant_id, userId: row.user_id, sessionId: row.session_id, query: row.query, requestedMode: null,
      context, settings: parseTaskSettings(context, {}), options: {}, createdAtMs: Date.now(), startedAtMs: Date.now(), deadlineMs: Date.now() + 60_000,
    };
  }

  const agentCall = (allowed: string[]): AgentCall => ({
    agentId: 'tool-agent', system: 'You count.', messages: [{ role: 'user', content: 'Count twice.' }],
    tools: roleToolSet(depsFor().tools, 'tenant', 'tester', allowed),
  });

  async function eventsOf(taskId: string, stepKey: string): Promise<EventRow[]> {
    const { rows } = await gateway().sql.query(
      'select type, agent_id, message, payload from task_events where task_id = $1 and dedupe_key like $2 order by seq', [taskId, `${stepKey}%`]);
    return rows;
  }

  it('a re-run of the step replays finished calls from their rows and records nothing twice', async () => {
    const task = await taskWith([{ tool: 'counter', args: { n: 1 } }, { tool: 'counter', args: { n: 2 } }]);
    const deps = depsFor();
    counterRuns = 0;
    const first = await runAgent(deps, task, agentCall(['counter']), 'replay#1', new AbortController().signal);
    const again = await runAgent(deps, task, agentCall(['counter']), 'replay#1', new AbortController().signal);
    assert.equal(counterRuns, 2, 'each call ran once');
    assert.ok('answer' in first && 'answer' in again);
    assert.equal(again.answer.text, first.answer.text);
    assert.match(first.answer.text, /Tool results: counter: 1; counter: 2\./);
    const events = await eventsOf(task.id, 'replay#1');
    assert.deepEqual(events.filter((event) => event.type.startsWith('TOOL_') || event.type.startsWith('AGENT_')).map((event) => event.type),
      ['AGENT_THINKING', 'AGENT_STARTED', 'TOOL_INVOKED', 'TOOL_OBSERVATION', 'TOOL_INVOKED', 'TOOL_OBSERVATION', 'AGENT_COMPLETED']);
    assert.deepEqual(events.filter((event) => event.type === 'TOOL_OBSERVATION').map((event) => event.payload!.cost_usd), [0.25, 0.25]);
    const calls = await db.selectFrom('tool_calls').selectAll().where('task_id', '=', task.id).orderBy('call_key').execute();
    assert.deepEqual(calls.map((call) => [call.call_key, call.tool, call.input, call.output]),
      [['replay#1:c0', 'counter', { n: 1 }, 1], ['replay#1:c1', 'counter', { n: 2 }, 2]]);
    const usage = await db.selectFrom('usage_records').select(['call_key', 'agent_id']).where('task_id', '=', task.id).where('agent_id', '=', 'tool-agent').execute();
    assert.equal(usage.length, 3, 'one usage row per turn, written once');
    const reserved = await db.selectFrom('token_reservations').select('call_key').where('task_id', '=', task.id).execute();
    assert.deepEqual(reserved, []);
  });

  it('calls asked for together stop at five; the rest are told they were not run', async () => {
    const task = await taskWith([
      [1, 2, 3].map((n) => ({ tool: 'counter', args: { n } })),
      [4, 5, 6].map((n) => ({ tool: 'counter', args: { n } })),
    ]);
    counterRuns = 0;
    const outcome = await runAgent(depsFor(), task, agentCall(['counter']), 'limit#1', new AbortController().signal);
    assert.equal(counterRuns, 5);
    assert.ok('answer' in outcome);
    assert.match(outcome.answer.text, /counter: not run: the limit of 5 tool calls is reached\.$/);
    const events = await eventsOf(task.id, 'limit#1');
    assert.equal(events.filter((event) => event.type === 'TOOL_INVOKED').length, 5);
  });

  it('an agent runs the tools it carries, also one that no registry holds', async () => {
    const carried: ToolDefinition = { ...counter, name: 'carried_only', costPerUseUsd: 0, execute: async () => 'from the carried set' };
    const task = await taskWith([{ tool: 'carried_only', args: {} }]);
    const deps = depsFor();
    assert.equal(deps.tools.get('carried_only'), undefined);
    const call: AgentCall = { ...agentCall([]), tools: { role: 'tester', allowed: ['carried_only'], offered: [carried] } };
    const outcome = await runAgent(deps, task, call, 'carried#1', new AbortController().signal);
    assert.ok('answer' in outcome);
    assert.match(outcome.answer.text, /Tool results: carried_only: from the carried set\./);
  });

  it('an agent\'s model tier chooses the models that answer it', async () => {
    const task = await taskWith([]);
    const deps = depsFor();
    const plain = await runAgent(deps, task, { ...agentCall([]), tools: undefined }, 'tier-default#1', new AbortController().signal);
    const large = await runAgent(deps, task, { ...agentCall([]), tools: undefined, modelTier: 'large' }, 'tier-large#1', new AbortController().signal);
    assert.ok('answer' in plain && 'answer' in large);
    assert.notEqual(plain.answer.model, 'mock-large');
    assert.equal(large.answer.model, 'mock-large');
  });

  it('an agent whose model calls no tool writes what a single call writes: the loop adds nothing to its path', async () => {
    const task = await taskWith([]);
    const deps = depsFor();
    const plain = await runAgent(deps, task, { ...agentCall([]), tools: undefined }, 'plain#1', new AbortController().signal);
    const looped = await runAgent(deps, task, agentCall(['counter']), 'looped#1', new AbortController().signal);
    assert.ok('answer' in plain && 'answer' in looped);
    assert.deepEqual(looped.answer, plain.answer);
    const types = async (stepKey: string) => (await eventsOf(task.id, stepKey)).map((event) => event.type);
    assert.deepEqual(await types('looped#1'), await types('plain#1'));
    const usage = await db.selectFrom('usage_records').select('call_key').where('task_id', '=', task.id).where('agent_id', '=', 'tool-agent').orderBy('call_key').execute();
    assert.deepEqual(usage.map((row) => row.call_key), [`${task.id}:looped#1`, `${task.id}:plain#1`]);
  });

  it('a budget spent between turns ends the loop: having said nothing, the agent reports the budget exhausted', async () => {
    const task = await taskWith([{ tool: 'spend_budget', args: {} }]);
    const outcome = await runAgent(depsFor(), task, agentCall(['spend_budget']), 'budget#1', new AbortController().signal);
    assert.ok('budgetExhausted' in outcome);
    assert.equal(outcome.budgetExhausted.scope, 'task');
    const events = await eventsOf(task.id, 'budget#1');
    assert.deepEqual(events.filter((event) => event.type.startsWith('TOOL_')).map((event) => event.type), ['TOOL_INVOKED', 'TOOL_OBSERVATION']);
    const thresholds = (await toolEventsAndThresholds(task.id)).filter((event) => event.type === 'BUDGET_THRESHOLD');
    assert.ok(thresholds.some((event) => event.payload!.threshold === 100));
    const reserved = await db.selectFrom('token_reservations').select('call_key').where('task_id', '=', task.id).execute();
    assert.deepEqual(reserved, []);
  });

  it('a cancel aborts the running tool, ends the loop, and records the turn\'s usage', async () => {
    const task = await taskWith([{ tool: 'hang', args: {} }]);
    const cancel = new AbortController();
    const running = runAgent(depsFor(), task, agentCall(['hang']), 'cancel#1', cancel.signal);
    setTimeout(() => cancel.abort(new Error('cancelled by the test')), 200);
    await assert.rejects(running, /cancelled by the test/);
    const usage = await db.selectFrom('usage_records').select('call_key').where('task_id', '=', task.id).where('agent_id', '=', 'tool-agent').execute();
    assert.equal(usage.length, 1);
    const reserved = await db.selectFrom('token_reservations').select('call_key').where('task_id', '=', task.id).execute();
    assert.deepEqual(reserved, []);
  });

  it('a settlement releases its reservation, crosses each threshold once, and repeated after a crash replaces its usage row', async () => {
    const task = await taskWith([]);
    await db.updateTable('tasks').set({ token_budget: 1000 }).where('id', '=', task.id).execute();
    const deps = depsFor();
    const settle = async (callKey: string, inputTokens: number, outputTokens: number) => {
      await db.transaction().execute((transaction) => reserveTokensWithin(transaction, deps.config, task, callKey, inputTokens, outputTokens));
      const crossings = await settleTokens(db, deps.config, task, callKey, 'settler', {
        text: 'answer', model: 'mock-model', provider: 'mock', inputTokens, outputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0, attempts: 1,
      });
      return crossings.filter((crossing) => crossing.scope === 'task').map((crossing) => [crossing.threshold, crossing.used]);
    };
    assert.deepEqual(await settle('settle#1', 700, 150), [[80, 850]]);
    // The same call again (its step re-run after a crash): its earlier row is replaced, not added to.
    assert.deepEqual(await settle('settle#1', 700, 250), [[80, 950], [90, 950]]);
    assert.deepEqual(await settle('settle#2', 20, 10), []);
    assert.deepEqual(await settle('settle#3', 20, 10), [[100, 1010]]);
    const usage = await db.selectFrom('usage_records').select(['call_key', 'total_tokens']).where('task_id', '=', task.id).orderBy('call_key').execute();
    assert.deepEqual(usage.map((row) => [row.call_key, Number(row.total_tokens)]), [['settle#1', 950], ['settle#2', 30], ['settle#3', 30]]);
    const reserved = await db.selectFrom('token_reservations').select('call_key').where('task_id', '=', task.id).execute();
    assert.deepEqual(reserved, []);
  });

  async function toolEventsAndThresholds(taskId: string): Promise<EventRow[]> {
    const { rows } = await gateway().sql.query('select type, agent_id, message, payload from task_events where task_id = $1 order by seq', [taskId]);
    return rows;
  }
});
