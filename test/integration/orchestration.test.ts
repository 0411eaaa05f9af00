import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { sampleValue, scrapeMetrics } from '../helpers/metrics.ts';

type Event = { seq: number; type: string; agent_id: string | null; message: string; payload: any };

const eventsOf = async (gateway: Gateway, taskId: string): Promise<Event[]> =>
  (await gateway.sql.query('select seq, type, agent_id, message, payload from task_events where task_id = $1 order by seq', [taskId])).rows;

const plan = (subtasks: Array<{ id: string; description: string; dependencies?: string[] }>, extra: Record<string, unknown> = {}) => ({
  complexity_score: 0.7, subtasks, execution_strategy: 'parallel', ...extra,
});

const firstSeq = (events: Event[], type: string, agentId: string) => events.find((event) => event.type === type && event.agent_id === agentId)?.seq ?? Infinity;

describe('orchestration: router, DAG and supervisor', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto' } });
  const submit = async (body: Record<string, unknown>) => {
    const answer = await gateway().request('POST', '/api/v1/tasks', body);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.task_id as string;
  };

  it('runs two independent agents in parallel and the dependent one after both, then synthesises all three', async () => {
    const taskId = await submit({
      query: 'Compare two cities', mode: 'standard',
      context: {
        mock_delay_ms: 400,
        mock_plan: plan([
          { id: 'a', description: 'Describe the first city' },
          { id: 'b', description: 'Describe the second city' },
          { id: 'c', description: 'Compare them', dependencies: ['a', 'b'] },
        ]),
      },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.mode, 'standard');
    const events = await eventsOf(gateway(), taskId);
    const planned = events.find((event) => event.type === 'PROGRESS' && event.payload?.stage === 'planned');
    assert.deepEqual(planned?.payload.deps, [{ from: 'a', to: 'c' }, { from: 'b', to: 'c' }]);
    assert.deepEqual(planned?.payload.plan.map((step: any) => step.id), ['a', 'b', 'c']);
    // a and b both start before either completes; c starts after both completed.
    assert.ok(firstSeq(events, 'AGENT_STARTED', 'b') < firstSeq(events, 'AGENT_COMPLETED', 'a'), 'b started while a ran');
    assert.ok(firstSeq(events, 'AGENT_STARTED', 'a') < firstSeq(events, 'AGENT_COMPLETED', 'b'), 'a started while b ran');
    const cStarted = firstSeq(events, 'AGENT_STARTED', 'c');
    assert.ok(cStarted > firstSeq(events, 'AGENT_COMPLETED', 'a') && cStarted > firstSeq(events, 'AGENT_COMPLETED', 'b'));
    assert.ok(firstSeq(events, 'DEPENDENCY_SATISFIED', 'c') < cStarted);
    assert.match(task.result, /Synthesis of 3 results/);
    for (const id of ['a:', 'b:', 'c:']) assert.ok(task.result.includes(id), `the answer draws on ${id}`);
    const output = events.filter((event) => event.type === 'LLM_OUTPUT');
    assert.equal(output.length, 1);
    assert.equal(output[0].agent_id, 'final_output');
    const { rows } = await gateway().sql.query('select agent_id from usage_records where task_id = $1 order by agent_id', [taskId]);
    assert.deepEqual(rows.map((row) => row.agent_id), ['a', 'b', 'c', 'decompose', 'synthesis']);
  });

  it('holds a parallel plan to max_concurrent_agents, given top-level or (as the reference\'s SDK sends it) in context', async () => {
    for (const limit of [{ max_concurrent_agents: 1 }, { context: { max_concurrent_agents: 1 } }]) {
      const taskId = await submit({
        query: 'Three parts at most one at a time', mode: 'standard', ...limit,
        context: { ...(limit as { context?: object }).context, mock_delay_ms: 200, mock_plan: plan(['p1', 'p2', 'p3'].map((id) => ({ id, description: `part ${id}` }))) },
      });
      const task = await waitForTask(gateway(), taskId);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
      const events = (await eventsOf(gateway(), taskId)).filter((event) => event.type === 'AGENT_STARTED' || event.type === 'AGENT_COMPLETED');
      let running = 0;
      for (const event of events) {
        running += event.type === 'AGENT_STARTED' ? 1 : -1;
        assert.ok(running <= 1, `${JSON.stringify(limit)}: two agents at once at seq ${event.seq}`);
      }
    }
  });

  it('runs a sequential plan one agent at a time, in the plan\'s order', async () => {
    const ids = ['s5', 's1', 's4', 's2', 's3'];
    const taskId = await submit({
      query: 'In order', mode: 'standard',
      context: { mock_plan: plan(ids.map((id) => ({ id, description: `step ${id}` })), { execution_strategy: 'sequential' }) },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    const agentEvents = events.filter((event) => ['AGENT_STARTED', 'AGENT_COMPLETED'].includes(event.type) && ids.includes(event.agent_id!));
    assert.deepEqual(agentEvents.map((event) => `${event.type === 'AGENT_STARTED' ? '+' : '-'}${event.agent_id}`),
      ids.flatMap((id) => [`+${id}`, `-${id}`]), 'each agent starts after the one before it completed');
  });

  it('answers a clearly simple auto task with one agent and one model call, without planning', async () => {
    const before = await scrapeMetrics(gateway().url);
    const taskId = await submit({ query: 'What is the capital of France?' });
    const task = await waitForTask(gateway(), taskId);
    const after = await scrapeMetrics(gateway().url);
    const moved = (labels: Record<string, string> = {}) => sampleValue(after, 'agentgate_model_calls_total', labels) - sampleValue(before, 'agentgate_model_calls_total', labels);
    assert.equal(moved(), 1, 'one model call on /metrics');
    assert.equal(moved({ phase: 'decomposition' }), 0);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.match(task.result, /capital of France/);
    assert.equal(task.mode, 'simple');
    assert.equal(task.unified_response.metadata.execution_mode, 'simple');
    assert.equal(task.unified_response.metadata.agents_used, 1);
    assert.equal(task.metadata.routing.decision, 'direct');
    assert.match(task.metadata.routing.reason, /short single request/);
    const { rows } = await gateway().sql.query('select agent_id from usage_records where task_id = $1', [taskId]);
    assert.deepEqual(rows.map((row) => row.agent_id), ['simple-agent'], 'exactly one model call');
    const events = await eventsOf(gateway(), taskId);
    assert.equal(events.filter((event) => event.agent_id === 'decompose' || event.payload?.stage === 'planned').length, 0, 'no planning events');
    assert.deepEqual(events.filter((event) => event.type === 'AGENT_STARTED').map((event) => event.agent_id), ['simple-agent']);
    assert.deepEqual(events.filter((event) => ['WORKFLOW_COMPLETED', 'STREAM_END'].includes(event.type)).map((event) => event.type), ['WORKFLOW_COMPLETED', 'STREAM_END']);
  });

  it('plans an auto task that is not clearly simple: the plan decides simple or a DAG, and the routing says why', async () => {
    // One sentence, but two parts joined by "and": the router plans it; the (mock) planner finds one subtask.
    const simpleId = await submit({ query: 'Tell me about the causes and effects of inflation.' });
    const simple = await waitForTask(gateway(), simpleId);
    assert.equal(simple.status, 'TASK_STATUS_COMPLETED', simple.error);
    assert.equal(simple.mode, 'simple');
    assert.equal(simple.unified_response.metadata.complexity_score, 0.2);
    assert.equal(simple.unified_response.metadata.execution_mode, 'simple');
    assert.deepEqual(simple.metadata.routing, { decision: 'planned', reason: 'a conjunction (possibly more than one part): "and"' });
    const simpleCalls = await gateway().sql.query('select agent_id from usage_records where task_id = $1 order by agent_id', [simpleId]);
    assert.deepEqual(simpleCalls.rows.map((row) => row.agent_id), ['decompose', 'simple-agent']);

    const dagId = await submit({ query: 'List three rivers. List three mountains. Then pick the longest river.' });
    const dag = await waitForTask(gateway(), dagId);
    assert.equal(dag.status, 'TASK_STATUS_COMPLETED', dag.error);
    assert.equal(dag.mode, 'standard');
    assert.equal(dag.metadata.routing.decision, 'planned');
    assert.ok(dag.unified_response.metadata.complexity_score >= 0.3);
    assert.equal(dag.unified_response.metadata.agents_used, 3);
    const events = await eventsOf(gateway(), dagId);
    const planned = events.find((event) => event.type === 'PROGRESS' && event.payload?.stage === 'planned');
    assert.deepEqual(planned?.payload.deps, [{ from: 'task-2', to: 'task-3' }]);
    const listed = await gateway().request('GET', '/api/v1/tasks?limit=5');
    assert.ok(listed.body.tasks.some((item: any) => item.task_id === dagId && item.mode === 'EXECUTION_MODE_STANDARD'), JSON.stringify(listed.body.tasks[0]));
  });

  it('does not route a task that names its mode: mode simple records no routing, mode standard plans a simple question', async () => {
    const simpleId = await submit({ query: 'What is the capital of France?', mode: 'simple' });
    const standardId = await submit({ query: 'What is the capital of France?', mode: 'standard' });
    const [simple, standard] = [await waitForTask(gateway(), simpleId), await waitForTask(gateway(), standardId)];
    assert.equal(simple.status, 'TASK_STATUS_COMPLETED', simple.error);
    assert.equal(standard.status, 'TASK_STATUS_COMPLETED', standard.error);
    assert.equal(simple.metadata.routing, undefined);
    assert.equal(standard.metadata.routing, undefined);
    const { rows } = await gateway().sql.query('select count(*)::int as calls from usage_records where task_id = $1 and agent_id = $2', [standardId, 'decompose']);
    assert.equal(rows[0].calls, 1);
  });

  it('falls back to one subtask when the plan does not validate, and says so', async () => {
    const taskId = await submit({ query: 'Plan this badly', mode: 'complex', context: { mock_plan: { complexity_score: 2, subtasks: 'no' } } });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    const recovery = events.find((event) => event.type === 'ERROR_RECOVERY');
    assert.equal(recovery?.payload.recovery, 'decomposition_fallback');
    assert.deepEqual(events.filter((event) => event.type === 'AGENT_STARTED').map((event) => event.agent_id), ['task-1']);
  });

  it('fails a plan whose dependencies form a cycle, naming it', async () => {
    const taskId = await submit({
      query: 'Go round in circles', mode: 'standard',
      context: { mock_plan: plan([{ id: 'x', description: 'x', dependencies: ['y'] }, { id: 'y', description: 'y', dependencies: ['x'] }, { id: 'z', description: 'z' }]) },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /cycle \(x, y\)/);
  });

  it('answers from the agents that succeeded and lists the one that failed', async () => {
    const taskId = await submit({
      query: 'Partly doomed', mode: 'standard',
      context: { mock_failures: { b: 1 }, mock_plan: plan([{ id: 'a', description: 'first part' }, { id: 'b', description: 'second part' }]) },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.match(task.result, /Synthesis of 1 results\. a: .*Failed: b\./);
    const events = await eventsOf(gateway(), taskId);
    assert.ok(events.some((event) => event.type === 'ERROR_OCCURRED' && event.agent_id === 'b'));
  });

  it('runs a supervisor team with events, retries a failing subtask, and reports it', async () => {
    const taskId = await submit({
      query: 'Supervised work', mode: 'supervisor',
      context: {
        mock_failures: { s2: 3 },
        mock_plan: plan([{ id: 's1', description: 'step one' }, { id: 's2', description: 'step two' }, { id: 's3', description: 'step three' }]),
      },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.mode, 'supervisor');
    const events = await eventsOf(gateway(), taskId);
    const types = events.map((event) => event.type);
    for (const type of ['TEAM_RECRUITED', 'ROLE_ASSIGNED', 'DELEGATION', 'TEAM_STATUS', 'TEAM_RETIRED']) assert.ok(types.includes(type), type);
    const retries = events.filter((event) => event.type === 'ERROR_RECOVERY' && event.payload?.recovery === 'subtask_retry');
    assert.deepEqual(retries.map((event) => event.payload.attempt), [2, 3]);
    assert.equal(events.filter((event) => event.type === 'ERROR_OCCURRED' && event.agent_id === 's2').length, 3);
    assert.match(task.result, /Failed: s2\./);
  });

  it('aborts a supervisor task when most subtasks fail', async () => {
    const taskId = await submit({
      query: 'Mostly doomed', mode: 'supervisor',
      context: { mock_failures: { s1: 3, s2: 3 }, mock_plan: plan([{ id: 's1', description: 'one' }, { id: 's2', description: 'two' }, { id: 's3', description: 'three' }]) },
    });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /supervisor aborted: 2 of 3 subtasks failed/);
    const started = (await eventsOf(gateway(), taskId)).filter((event) => event.type === 'AGENT_STARTED').map((event) => event.agent_id);
    assert.ok(!started.includes('s3'), 's3 never ran');
  });

  it('pauses a supervisor task between subtasks and resumes it to the end', async () => {
    const taskId = await submit({
      query: 'Pausable team', mode: 'supervisor',
      context: { mock_delay_ms: 800, mock_plan: plan([{ id: 's1', description: 'one' }, { id: 's2', description: 'two' }, { id: 's3', description: 'three' }]) },
    });
    await waitFor('subtask 2 to start', async () => (await eventsOf(gateway(), taskId)).find((event) => event.type === 'AGENT_STARTED' && event.agent_id === 's2'));
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`, {})).status, 202);
    const paused = await waitFor('WORKFLOW_PAUSED', async () => (await eventsOf(gateway(), taskId)).find((event) => event.type === 'WORKFLOW_PAUSED'));
    assert.equal(paused.payload.checkpoint, 'pre_subtask_3');
    assert.ok(!(await eventsOf(gateway(), taskId)).some((event) => event.type === 'AGENT_STARTED' && event.agent_id === 's3'));
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`, {})).status, 202);
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const events = await eventsOf(gateway(), taskId);
    assert.equal(events.filter((event) => event.type === 'AGENT_COMPLETED' && event.agent_id === 's2').length, 1);
    assert.equal(events.filter((event) => event.type === 'WORKFLOW_COMPLETED').length, 1);
  });

  it('keeps five parallel agents within a small task budget', async () => {
    const budget = 1200;
    const taskId = await submit({
      query: 'Spend carefully', mode: 'standard',
      context: {
        token_budget: budget, mock_answer_words: 300,
        mock_plan: plan(['p1', 'p2', 'p3', 'p4', 'p5'].map((id) => ({ id, description: `part ${id}` }))),
      },
    });
    await waitFor('the agents to finish or the budget to stop them', async () => {
      const { body } = await gateway().request('GET', `/api/v1/tasks/${taskId}`);
      return ['TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_PAUSED'].includes(body.status) || undefined;
    });
    const { rows } = await gateway().sql.query('select coalesce(sum(input_tokens + output_tokens), 0)::int as used from usage_records where task_id = $1', [taskId]);
    // The bound of issue 7: a call never starts that could exceed the budget, except by the input estimate's error.
    assert.ok(rows[0].used <= budget * 1.1, `used ${rows[0].used} of ${budget}`);
  });
});
