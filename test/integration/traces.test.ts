import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { exportingTo, startOtlpCollector, useOtlpCollector, type OtlpCollector, type ReceivedSpan } from '../helpers/otlp-collector.ts';

const CALCULATOR_TASK = {
  query: 'What is 2+2?',
  context: { role: 'generalist', mock_tool_calls: [{ tool: 'calculator', args: { expression: '2+2' } }] },
};

/** A caller's W3C trace context: a fresh trace id and parent span id each time. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

async function submit(gateway: Gateway, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  const submitted = await gateway.request('POST', '/api/v1/tasks', body, headers);
  assert.equal(submitted.status, 200, submitted.text);
  return submitted.body.task_id;
}

/** The task's spans once its workflow's run span has arrived (it ends last): every span that names the task. */
async function spansOfTask(collector: OtlpCollector, taskId: string): Promise<ReceivedSpan[]> {
  const ofTask = () => collector.spans().filter((span) => namesTask(span, taskId));
  await waitFor(`the run span of task ${taskId}`, async () => ofTask().find((span) => span.name === 'task run'));
  return ofTask();
}

const namesTask = (span: ReceivedSpan, taskId: string) =>
  span.attributes['agentgate.task.id'] === taskId || span.attributes['ai.telemetry.metadata.task_id'] === taskId;

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  assert.equal(found.length, 1, `one span ${name}, got ${found.length}: ${spans.map((span) => span.name).join(', ')}`);
  return found[0];
}

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);

describe('traces of a task, exported over OTLP', () => {
  const env: Record<string, string> = { DEFAULT_TASK_MODE: 'auto', SCHEDULE_POLL_INTERVAL_MS: '100' };
  const collector = useOtlpCollector(env);
  const gateway = useGateway({ env });

  it('one trace from the caller\'s traceparent: submit, the run, each step, the agent, its model calls and its tool call', async () => {
    const caller = callerTrace();
    const taskId = await submit(gateway(), CALCULATOR_TASK, { traceparent: caller.traceparent, tracestate: 'vendor=abc' });
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    const spans = await spansOfTask(collector(), taskId);
    assert.deepEqual(spans.filter((span) => span.traceId !== caller.traceId), [], 'every span of the task is in the caller\'s trace');

    const submitSpan = only(spans, 'task submit');
    assert.equal(submitSpan.parentSpanId, caller.parentId);
    assert.equal(submitSpan.resource['service.name'], 'agentgate');
    const run = only(spans, 'task run');
    assert.equal(run.parentSpanId, submitSpan.spanId);

    const steps = spans.filter((span) => span.name.startsWith('step '));
    assert.deepEqual(steps.filter((step) => step.parentSpanId !== run.spanId), [], 'steps are children of the run');
    for (const name of ['start-task', 'checkpoint:pre_routing', 'assign-role', 'announce-plan', 'agent:task-1', 'complete-task']) {
      assert.equal(only(steps, `step ${name}`).attributes['agentgate.step.name'], name);
    }
    const agentStep = only(steps, 'step agent:task-1');
    const agent = only(spans, 'invoke_agent task-1');
    assert.equal(agent.parentSpanId, agentStep.spanId);
    assert.equal(agent.attributes['agentgate.agent.role'], 'generalist');

    // The tool loop: a turn that asks for the calculator, the call, then a turn that answers.
    const modelCalls = childrenOf(spans, agent).filter((span) => span.name === 'ai.streamText');
    assert.equal(modelCalls.length, 2);
    for (const call of modelCalls) {
      assert.equal(call.attributes['ai.telemetry.metadata.task_id'], taskId);
      assert.equal(call.attributes['ai.model.provider'], 'mock');
      assert.match(String(call.attributes['ai.model.id']), /^mock-/);
      assert.ok(Number(call.attributes['ai.usage.inputTokens']) > 0);
      assert.ok(Number(call.attributes['ai.usage.outputTokens']) > 0);
      const providerRequest = only(childrenOf(spans, call), 'ai.streamText.doStream');
      assert.equal(providerRequest.attributes['gen_ai.usage.output_tokens'], call.attributes['ai.usage.outputTokens']);
    }
    const tool = only(childrenOf(spans, agent), 'execute_tool calculator');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'calculator');
    assert.equal(tool.attributes['agentgate.tool.outcome'], 'success');
    assert.notEqual(tool.status.code, 2);

    // Prompts and answers are the users' data: they stay out of the spans.
    const keys = spans.flatMap((span) => Object.keys(span.attributes));
    assert.deepEqual(keys.filter((key) => /^ai\.(prompt|response\.text)/.test(key)), []);
    // The context kept with the task is the submission's span, with the caller's tracestate.
    const { rows } = await gateway().sql.query('select options->\'trace_context\' as carrier from tasks where id = $1', [taskId]);
    assert.deepEqual(rows[0].carrier, { traceparent: `00-${caller.traceId}-${submitSpan.spanId}-01`, tracestate: 'vendor=abc' });
  });

  it('a failed tool call is a failed span with its outcome', async () => {
    const taskId = await submit(gateway(), {
      query: 'What is 2 +?', context: { role: 'generalist', mock_tool_calls: [{ tool: 'calculator', args: { expression: '2 +' } }] },
    });
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    const tool = only(await spansOfTask(collector(), taskId), 'execute_tool calculator');
    assert.equal(tool.attributes['agentgate.tool.outcome'], 'error');
    assert.equal(tool.status.code, 2);
    assert.match(String(tool.status.message), /Unexpected end of expression/);
  });

  it('a tool run directly through the tools API is a span of the caller\'s trace, failed when the tool fails', async () => {
    const caller = callerTrace();
    const ran = await gateway().request('POST', '/api/v1/tools/calculator/execute', { arguments: { expression: '6*7' } }, { traceparent: caller.traceparent });
    assert.equal(ran.status, 200, ran.text);
    const failed = await gateway().request('POST', '/api/v1/tools/calculator/execute', { arguments: { expression: '6 *' } });
    assert.equal(failed.body.success, false, failed.text);

    const direct = await waitFor('both direct tool spans', async () => {
      const spans = collector().spans().filter((span) => span.name === 'execute_tool calculator' && span.attributes['agentgate.task.id'] === undefined);
      return spans.length === 2 ? spans : undefined;
    });
    const succeeded = direct.find((span) => span.traceId === caller.traceId);
    const errored = direct.find((span) => span.traceId !== caller.traceId);
    assert.ok(succeeded && errored, 'one span in the caller\'s trace, one in a trace of its own');
    assert.equal(succeeded.parentSpanId, caller.parentId);
    assert.equal(succeeded.attributes['agentgate.tool.outcome'], 'success');
    assert.match(String(succeeded.attributes['agentgate.tenant.id']), /^[0-9a-f-]{36}$/);
    assert.equal(errored.parentSpanId, undefined, 'without a traceparent, a trace of its own');
    assert.equal(errored.attributes['agentgate.tool.outcome'], 'error');
    assert.equal(errored.status.code, 2);
  });

  it('a scheduled run is a trace rooted at its schedule run span, which the task\'s run joins', async () => {
    const created = await gateway().request('POST', '/api/v1/schedules', { name: 'traced', cron_expression: '0 8 * * *', task_query: 'Hello', task_context: { mode: 'simple' } });
    assert.equal(created.status, 201, created.text);
    const scheduleId = created.body.schedule_id;
    await gateway().sql.query('update schedules set next_run_at = now() where id = $1', [scheduleId]);
    const runSpan = await waitFor('the schedule run span', async () =>
      collector().spans().find((span) => span.name === 'schedule run' && span.attributes['agentgate.schedule.id'] === scheduleId));
    assert.equal(runSpan.parentSpanId, undefined, 'a root: no request started it');
    const taskId = String(runSpan.attributes['agentgate.task.id']);
    const spans = await spansOfTask(collector(), taskId);
    assert.equal(only(spans, 'task run').parentSpanId, runSpan.spanId);
    assert.deepEqual(spans.filter((span) => span.traceId !== runSpan.traceId), [], 'every span of the run\'s task is in its trace');
  });

  it('a task submitted without a traceparent, or with a malformed one, starts a trace of its own', async () => {
    const malformed = ['00-not-a-trace-01', `01-${'0'.repeat(32)}-${'1'.repeat(16)}-01`];
    for (const headers of [{}, ...malformed.map((traceparent) => ({ traceparent }))]) {
      const taskId = await submit(gateway(), { query: 'Hello', mode: 'simple' }, headers);
      assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
      const spans = await spansOfTask(collector(), taskId);
      const submitSpan = only(spans, 'task submit');
      assert.equal(submitSpan.parentSpanId, undefined, `a root span (${JSON.stringify(headers)})`);
      assert.deepEqual(spans.filter((span) => span.traceId !== submitSpan.traceId), []);
      // A simple task answers in one step: the agent and its model call are in it.
      const agent = only(spans, 'invoke_agent simple-agent');
      assert.equal(agent.parentSpanId, only(spans, 'step answer').spanId);
      assert.equal(only(spans, 'ai.streamText').parentSpanId, agent.spanId);
    }
  });

  it('a caller\'s unsampled traceparent does not turn recording off: the task\'s spans are in the caller\'s trace all the same', async () => {
    const caller = callerTrace();
    const taskId = await submit(gateway(), { query: 'Hello', mode: 'simple' }, { traceparent: `00-${caller.traceId}-${caller.parentId}-00` });
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    const spans = await spansOfTask(collector(), taskId);
    assert.equal(only(spans, 'task submit').parentSpanId, caller.parentId);
    assert.deepEqual(spans.filter((span) => span.traceId !== caller.traceId), []);
  });

  it('the workflow\'s log lines carry the trace and span ids', async () => {
    const caller = callerTrace();
    // A plan the schema refuses: the decomposition step logs a warning and the task runs as one subtask.
    const taskId = await submit(gateway(), { query: 'Plan this badly', context: { mock_plan: { complexity_score: 2, subtasks: 'no' } } },
      { traceparent: caller.traceparent });
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    const decompose = only(await spansOfTask(collector(), taskId), 'step decompose');
    const line = await waitFor('the decomposition warning', async () => gateway().output().split('\n')
      .map((text) => (text.startsWith('{') ? JSON.parse(text) : {}))
      .find((entry) => entry.msg === 'decomposition failed; running the query as one subtask' && entry.task_id === taskId));
    assert.equal(line.trace_id, caller.traceId);
    assert.equal(line.span_id, decompose.spanId);
  });
});

describe('sampling is the gateway\'s decision', () => {
  const env: Record<string, string> = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' };
  const collector = useOtlpCollector(env);
  const gateway = useGateway({ env });

  it('at ratio 0 a caller\'s sampled traceparent exports nothing, through a task or the tools API, and its trace id is still the parent', async () => {
    const caller = callerTrace();
    const taskId = await submit(gateway(), CALCULATOR_TASK, { traceparent: caller.traceparent });
    assert.equal((await waitForTask(gateway(), taskId)).status, 'TASK_STATUS_COMPLETED');
    const tool = await gateway().request('POST', '/api/v1/tools/calculator/execute', { arguments: { expression: '6*7' } }, { traceparent: callerTrace().traceparent });
    assert.equal(tool.status, 200, tool.text);
    const { rows } = await gateway().sql.query('select options->\'trace_context\'->>\'traceparent\' as traceparent from tasks where id = $1', [taskId]);
    assert.match(rows[0].traceparent, new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-00$`), 'the caller\'s trace, not sampled');
    // Absence can only be watched for a while: ten times the batch delay an exporting gateway waits.
    await sleep(1000);
    assert.deepEqual(collector().spans().map((span) => span.name), []);
  });
});

describe('a trace across processes and a crash', () => {
  const env: Record<string, string> = {};
  const collector = useOtlpCollector(env);

  it('a task submitted to a gateway-only process and run by a worker killed mid-agent stays one trace, without spans for replayed steps', async (t) => {
    const gateway = await startGateway(t, {
      env: { ...env, EXECUTOR_ID: 'traces-gateway', OTEL_SERVICE_NAME: 'agentgate-gateway', DEFAULT_TASK_MODE: 'auto' }, args: ['--role', 'gateway'],
    });
    const worker = await startGateway(t, {
      databaseUrl: gateway.databaseUrl, env: { ...env, EXECUTOR_ID: 'traces-worker', OTEL_SERVICE_NAME: 'agentgate-worker', DEFAULT_TASK_MODE: 'auto' },
    });
    const caller = callerTrace();
    const taskId = await submit(gateway, { ...CALCULATOR_TASK, context: { ...CALCULATOR_TASK.context, mock_delay_ms: 3000 } }, { traceparent: caller.traceparent });
    const exportedBeforeKill = [...['start-task', 'assign-role', 'announce-plan'].map((name) => `step ${name}`), 'execute_tool calculator'];
    await waitFor('the steps before the agent, and the tool call, to be exported', async () => {
      const names = collector().spans().filter((span) => namesTask(span, taskId)).map((span) => span.name);
      return exportedBeforeKill.every((name) => names.includes(name)) || undefined;
    });
    // Killed while the agent's second turn streams: its calculator call ran and is recorded.
    await waitFor('the tool call to be recorded', async () => {
      const { rows } = await worker.sql.query("select 1 from task_events where task_id = $1 and type = 'TOOL_OBSERVATION'", [taskId]);
      return rows.length > 0 || undefined;
    });
    await worker.kill('SIGKILL');
    await worker.restart();
    assert.equal((await waitForTask(gateway, taskId, 60_000)).status, 'TASK_STATUS_COMPLETED');

    const spans = await spansOfTask(collector(), taskId);
    assert.deepEqual(spans.filter((span) => span.traceId !== caller.traceId), []);
    const submitSpan = only(spans, 'task submit');
    assert.equal(submitSpan.resource['service.name'], 'agentgate-gateway');
    assert.equal(submitSpan.parentSpanId, caller.parentId);
    // The killed run's span never ended, so it was never exported; the recovered run's is the submission's child.
    const run = only(spans, 'task run');
    assert.equal(run.resource['service.name'], 'agentgate-worker');
    assert.equal(run.parentSpanId, submitSpan.spanId);
    const stepNames = spans.filter((span) => span.name.startsWith('step ')).map((span) => span.name);
    assert.deepEqual(stepNames.filter((name, index) => stepNames.indexOf(name) !== index), [], 'no step has two spans');
    for (const name of [...exportedBeforeKill.slice(0, -1), 'step agent:task-1', 'step complete-task']) assert.ok(stepNames.includes(name), name);
    const agentStep = only(spans, 'step agent:task-1');
    assert.equal(agentStep.parentSpanId, run.spanId, 'the agent ran again in the recovered run');
    assert.equal(only(spans, 'invoke_agent task-1').parentSpanId, agentStep.spanId);
    const tool = only(spans, 'execute_tool calculator');
    assert.notEqual(tool.resource['service.instance.id'], run.resource['service.instance.id'],
      'the calculator ran once, before the crash: the recovered agent took its recorded outcome');
  });
});

describe('the SDK\'s default protocol', () => {
  it('with only an OTLP endpoint set, spans go out as OTLP/HTTP protobuf, carrying the caller\'s trace id and the span names', async (t) => {
    const collector = await startOtlpCollector(t);
    const gateway = await startGateway(t, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' } });
    const caller = callerTrace();
    const taskId = await submit(gateway, { query: 'Hello', mode: 'simple' }, { traceparent: caller.traceparent });
    assert.equal((await waitForTask(gateway, taskId)).status, 'TASK_STATUS_COMPLETED');
    // Protobuf keeps ids as raw bytes and names as UTF-8: enough to see what was sent without a decoder.
    const traceId = Buffer.from(caller.traceId, 'hex');
    const exported = await waitFor('the task run span in a protobuf export', async () => {
      const bodies = collector.protobufExports().filter((body) => body.includes(traceId));
      return bodies.some((body) => body.includes('task run')) ? Buffer.concat(bodies) : undefined;
    });
    for (const name of ['task submit', 'task run', 'step answer', 'invoke_agent simple-agent', 'ai.streamText']) assert.ok(exported.includes(name), name);
    assert.ok(exported.includes(taskId), 'the task id attribute');
    assert.equal(collector.spans().length, 0, 'nothing went out as JSON');
  });
});

describe('tracing off', () => {
  it('with OTEL_SDK_DISABLED=true nothing is exported or stored, and a traced task with a tool call completes', async (t) => {
    const collector = await startOtlpCollector(t);
    const gateway = await startGateway(t, { env: { ...exportingTo(collector), OTEL_SDK_DISABLED: 'true', DEFAULT_TASK_MODE: 'auto' } });
    const taskId = await submit(gateway, CALCULATOR_TASK, { traceparent: callerTrace().traceparent });
    const task = await waitForTask(gateway, taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.match(task.result, /calculator: 4/);
    const { rows } = await gateway.sql.query('select options from tasks where id = $1', [taskId]);
    assert.equal(rows[0].options.trace_context, undefined);
    // Absence can only be watched for a while: ten times the batch delay an exporting gateway would wait.
    await sleep(1000);
    assert.equal(collector.requestCount(), 0);
  });
});

describe('shutdown', () => {
  it('spans still waiting for their batch are exported when the gateway stops', async (t) => {
    const collector = await startOtlpCollector(t);
    // A batch delay longer than the test: only the flush at shutdown can send these spans.
    const gateway = await startGateway(t, { env: { ...exportingTo(collector), OTEL_BSP_SCHEDULE_DELAY: '600000' } });
    const taskId = await submit(gateway, { query: 'Hello' }, { traceparent: callerTrace().traceparent });
    assert.equal((await waitForTask(gateway, taskId)).status, 'TASK_STATUS_COMPLETED');
    assert.equal(collector.requestCount(), 0, 'nothing is sent before the batch delay');
    assert.equal((await gateway.kill('SIGTERM')).code, 0);
    const names = collector.spans().filter((span) => namesTask(span, taskId)).map((span) => span.name);
    for (const name of ['task submit', 'step answer', 'invoke_agent simple-agent', 'ai.streamText']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  });
});
