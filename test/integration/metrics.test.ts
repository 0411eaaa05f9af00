import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { freePort, startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { histogramOf, sampleValue, scrapeMetrics, type Labels, type Metrics } from '../helpers/metrics.ts';
import { startOwnPostgres } from '../helpers/own-postgres.ts';
import { readSse } from '../helpers/sse-client.ts';

const TASK_QUEUE = 'agentgate-tasks';
const JWT_SECRET = 'metrics-test-secret-of-at-least-32-characters';

/** One turn with a calculator call and a call of a tool that does not exist, then a calculator call that fails. */
const TOOL_SCRIPT = [
  [{ tool: 'calculator', args: { expression: '2+2' } }, { tool: 'no_such_tool_xyz', args: {} }],
  { tool: 'calculator', args: { expression: '1+' } },
];

async function runTask(gateway: Gateway, body: Record<string, unknown>): Promise<{ id: string; mode: string }> {
  const submitted = await gateway.request('POST', '/api/v1/tasks', body);
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', JSON.stringify(task));
  const { rows } = await gateway.sql.query('select mode from tasks where id = $1', [submitted.body.task_id]);
  return { id: submitted.body.task_id, mode: rows[0].mode };
}

/** What the usage table says every model call of the database spent so far. */
async function usageTotals(gateway: Gateway) {
  const { rows } = await gateway.sql.query(`
    select count(*)::int as calls, coalesce(sum(input_tokens), 0)::int as input, coalesce(sum(output_tokens), 0)::int as output,
      coalesce(sum(cost_usd), 0)::float8 as cost
    from usage_records where provider = 'mock'`);
  return rows[0] as { calls: number; input: number; output: number; cost: number };
}

function modelTotals(metrics: Metrics) {
  return {
    calls: sampleValue(metrics, 'agentgate_model_requests_total', { provider: 'mock', outcome: 'ok' }),
    input: sampleValue(metrics, 'agentgate_model_tokens_total', { provider: 'mock', type: 'input' }),
    output: sampleValue(metrics, 'agentgate_model_tokens_total', { provider: 'mock', type: 'output' }),
    cost: sampleValue(metrics, 'agentgate_model_cost_usd_total', { provider: 'mock' }),
  };
}

/** Each family this gateway exposes, its type, and the label names each of its series carries. */
const FAMILIES: Record<string, [type: string, labels: string[]]> = {
  agentgate_http_requests_total: ['counter', ['method', 'route', 'status_code']],
  agentgate_http_request_duration_seconds: ['histogram', ['method', 'route']],
  agentgate_tasks: ['gauge', ['status', 'mode']],
  agentgate_task_waits: ['gauge', ['wait']],
  agentgate_tasks_finished_total: ['counter', ['status', 'mode']],
  agentgate_queue_depth: ['gauge', ['queue']],
  agentgate_queue_oldest_wait_seconds: ['gauge', ['queue']],
  agentgate_queue_wait_seconds: ['histogram', ['queue']],
  agentgate_workflows_active: ['gauge', []],
  agentgate_model_calls_total: ['counter', ['phase']],
  agentgate_model_requests_total: ['counter', ['provider', 'model', 'outcome']],
  agentgate_model_request_duration_seconds: ['histogram', ['provider', 'model']],
  agentgate_model_tokens_total: ['counter', ['provider', 'model', 'type']],
  agentgate_model_cost_usd_total: ['counter', ['provider', 'model']],
  agentgate_tool_calls_total: ['counter', ['tool', 'outcome']],
  agentgate_tool_call_duration_seconds: ['histogram', ['tool']],
  agentgate_streams_open: ['gauge', ['route']],
  agentgate_event_append_duration_seconds: ['histogram', ['path']],
  agentgate_event_batch_appends: ['histogram', []],
  agentgate_event_batch_events: ['histogram', []],
  agentgate_db_pool_connections: ['gauge', ['state']],
  agentgate_db_pool_waiting_requests: ['gauge', []],
  agentgate_db_pool_max_connections: ['gauge', []],
  agentgate_executor_heartbeats_total: ['counter', ['outcome']],
  agentgate_executors: ['gauge', ['state']],
  agentgate_metrics_read_failures_total: ['counter', ['read']],
  agentgate_background_errors_total: ['counter', ['source']],
  agentgate_database_retries_total: ['counter', ['reason']],
  agentgate_webhook_attempts_total: ['counter', ['outcome']],
  agentgate_process_cpu_seconds_total: ['counter', []],
  agentgate_python_sandboxes: ['gauge', ['state']],
  agentgate_python_sandbox_calls_waiting: ['gauge', []],
  agentgate_python_sandbox_wait_seconds: ['histogram', []],
};

describe('GET /metrics while tasks run', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto', DB_POOL_SIZE: '7' } });

  it('parses as the Prometheus text format, with every family of its documented type and labels', async () => {
    await runTask(gateway(), { query: 'What is 2+2?', context: { role: 'generalist', mock_tool_calls: TOOL_SCRIPT } });
    const metrics = await scrapeMetrics(gateway().url);
    for (const [name, [type, labels]] of Object.entries(FAMILIES)) {
      assert.ok(metrics[name], `${name} is exposed`);
      assert.equal(metrics[name].type, type.toUpperCase(), `${name} is a ${type}`);
      assert.notEqual(metrics[name].help, '', `${name} has a help text`);
      // The parser flattens a histogram's series into one entry, without their labels.
      if (type === 'histogram') continue;
      for (const series of metrics[name].metrics) {
        assert.deepEqual(Object.keys(series.labels ?? {}).sort(), [...labels].sort(), `${name} series labels: ${JSON.stringify(series.labels)}`);
      }
    }
    assert.ok((histogramOf(metrics, 'agentgate_event_batch_appends').count ?? 0) > 0, 'grouped event batches were written');
    assert.equal(sampleValue(metrics, 'agentgate_db_pool_max_connections'), 7);
    const poolConnections = sampleValue(metrics, 'agentgate_db_pool_connections');
    assert.ok(poolConnections >= 1 && poolConnections <= 7, `pool connections ${poolConnections} within DB_POOL_SIZE`);
    assert.equal(sampleValue(metrics, 'agentgate_queue_depth', { queue: TASK_QUEUE }), 0, 'the task queue is reported when empty');
    assert.equal(sampleValue(metrics, 'agentgate_task_waits', { wait: 'provider-outage' }), 0, 'every kind of wait is reported when none is open');
    // The heartbeat (every 5 s by default) renews this process's identity and counts the identities it sees.
    const beating = await waitFor('a heartbeat', async () => {
      const scraped = await scrapeMetrics(gateway().url);
      return sampleValue(scraped, 'agentgate_executor_heartbeats_total', { outcome: 'ok' }) >= 1 ? scraped : undefined;
    }, 15_000);
    assert.equal(sampleValue(beating, 'agentgate_executors', { state: 'alive' }), 1, 'this process');
    assert.equal(sampleValue(beating, 'agentgate_executors', { state: 'dead' }), 0);
  });

  it('a task with tool calls moves the task, tool, model, token, cost and event metrics by what it did', async () => {
    const before = await scrapeMetrics(gateway().url);
    const usageBefore = await usageTotals(gateway());
    const task = await runTask(gateway(), { query: 'What is 2+2?', context: { role: 'generalist', mock_tool_calls: TOOL_SCRIPT } });
    const after = await scrapeMetrics(gateway().url);
    const moved = (name: string, labels: Labels = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);

    assert.equal(moved('agentgate_tasks_finished_total', { status: 'COMPLETED', mode: task.mode }), 1);
    assert.equal(moved('agentgate_tasks_finished_total', { status: 'FAILED' }), 0);
    assert.equal(moved('agentgate_tool_calls_total', { tool: 'calculator', outcome: 'ok' }), 1);
    assert.equal(moved('agentgate_tool_calls_total', { tool: 'calculator', outcome: 'error' }), 1);
    assert.equal(moved('agentgate_tool_calls_total', { tool: 'unknown', outcome: 'refused' }), 1, 'a name no tool has is counted as unknown');
    assert.ok(moved('agentgate_model_calls_total', { phase: 'agent' }) >= 3, 'three agent turns at least (two with tool calls, one answer)');
    const batches = (metrics: Metrics) => histogramOf(metrics, 'agentgate_event_batch_events');
    assert.ok(batches(after).count! > batches(before).count!, 'the task\'s events went out in grouped batches');
    assert.ok(batches(after).sum! > batches(before).sum!);

    // Model requests, tokens and cost match the usage table once the workflow has ended (it titles the session
    // after the task completed).
    await waitFor('the workflow to end and the model metrics to match the usage rows', async () => {
      const usage = await usageTotals(gateway());
      const scraped = await scrapeMetrics(gateway().url);
      if (sampleValue(scraped, 'agentgate_workflows_active') !== 0) return undefined;
      const metrics = modelTotals(scraped);
      const counted = { calls: metrics.calls - modelTotals(before).calls, input: metrics.input - modelTotals(before).input, output: metrics.output - modelTotals(before).output };
      const recorded = { calls: usage.calls - usageBefore.calls, input: usage.input - usageBefore.input, output: usage.output - usageBefore.output };
      const costDifference = Math.abs((metrics.cost - modelTotals(before).cost) - (usage.cost - usageBefore.cost));
      return recorded.calls >= 4 && JSON.stringify(counted) === JSON.stringify(recorded) && costDifference < 1e-6 ? true : undefined;
    });
    assert.doesNotMatch(JSON.stringify(after), /no_such_tool_xyz/, 'the requested name is not a label');
  });

  it('counts HTTP requests by route pattern and status, and every unknown URL under one label', async () => {
    const task = await runTask(gateway(), { query: 'route labels', mode: 'simple' });
    const before = await scrapeMetrics(gateway().url);
    for (let index = 0; index < 3; index += 1) assert.equal((await gateway().request('GET', `/api/v1/tasks/${task.id}`)).status, 200);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${crypto.randomUUID()}`)).status, 404);
    assert.equal((await gateway().request('GET', '/no/such/path/abc123')).status, 404);
    assert.equal((await gateway().request('GET', `/wp-admin/${crypto.randomUUID()}.php`)).status, 404);
    const response = await fetch(`${gateway().url}/metrics`);
    const text = await response.text();
    const after = await scrapeMetrics(gateway().url);
    const moved = (labels: Labels) => sampleValue(after, 'agentgate_http_requests_total', labels) - sampleValue(before, 'agentgate_http_requests_total', labels);

    assert.equal(moved({ method: 'GET', route: '/api/v1/tasks/:id', status_code: '200' }), 3);
    assert.equal(moved({ method: 'GET', route: '/api/v1/tasks/:id', status_code: '404' }), 1);
    assert.equal(moved({ method: 'GET', route: 'unmatched', status_code: '404' }), 2);
    assert.equal(moved({ method: 'GET', route: '/metrics', status_code: '200' }), 2, 'the scrapes between the two');
    assert.doesNotMatch(text, new RegExp(task.id), 'no raw URL in the labels');
    assert.doesNotMatch(text, /abc123|wp-admin/);
  });

  it('a running task shows as active and RUNNING, and an SSE stream counts as open until it ends', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow answer', mode: 'simple', context: { mock_delay_ms: 3000, mock_answer_words: 30 } });
    assert.equal(submitted.status, 200);
    const taskId = submitted.body.task_id;
    const stream = readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}`);
    const during = await waitFor('the running task and its stream to show', async () => {
      const metrics = await scrapeMetrics(gateway().url);
      const isStreaming = sampleValue(metrics, 'agentgate_streams_open', { route: '/api/v1/stream/sse' }) === 1;
      return isStreaming && sampleValue(metrics, 'agentgate_tasks', { status: 'RUNNING', mode: 'simple' }) === 1 ? metrics : undefined;
    });
    assert.equal(sampleValue(during, 'agentgate_workflows_active'), 1);

    const streamed = await stream;
    assert.equal(streamed.status, 200);
    assert.equal(streamed.messages.at(-1)?.event, 'done');
    await waitForTask(gateway(), taskId);
    // The workflow still records its end after the task's status and STREAM_END are committed.
    await waitFor('the stream, the workflow and the running task to be gone', async () => {
      const metrics = await scrapeMetrics(gateway().url);
      const gone = ['agentgate_streams_open', 'agentgate_workflows_active', 'agentgate_tasks'].every((name) => sampleValue(metrics, name) === 0);
      return gone ? true : undefined;
    });
  });
});

test('queue depth on the process that enqueues; queue wait on the process that dequeued, read from its own metrics listener', { timeout: 120_000 }, async (t) => {
  const front = await startGateway(t, { env: { EXECUTOR_ID: 'metrics-front' }, args: ['--role', 'gateway'] });
  const submitted = await Promise.all([1, 2].map((index) => front.request('POST', '/api/v1/tasks', { query: `queued ${index}`, mode: 'simple' })));
  const taskIds = submitted.map((answer) => answer.body.task_id as string);
  const queued = await scrapeMetrics(front.url);
  assert.equal(sampleValue(queued, 'agentgate_queue_depth', { queue: TASK_QUEUE }), 2);
  assert.equal(sampleValue(queued, 'agentgate_tasks', { status: 'QUEUED' }), 2);
  await waitFor('the queued tasks to wait a second', async () => {
    const metrics = await scrapeMetrics(front.url);
    return sampleValue(metrics, 'agentgate_queue_oldest_wait_seconds', { queue: TASK_QUEUE }) > 1 ? true : undefined;
  });

  const metricsPort = await freePort();
  const worker = await startGateway(t, { databaseUrl: front.databaseUrl, env: { EXECUTOR_ID: 'metrics-worker', METRICS_PORT: String(metricsPort) } });
  for (const taskId of taskIds) assert.equal((await waitForTask(front, taskId)).status, 'TASK_STATUS_COMPLETED');
  assert.equal((await worker.request('GET', '/metrics')).status, 404, 'with METRICS_PORT the API listener does not serve /metrics');
  const workerMetrics = await scrapeMetrics(`http://127.0.0.1:${metricsPort}`);
  // One series (queue agentgate-tasks): its +Inf bucket is its count.
  const waits = histogramOf(workerMetrics, 'agentgate_queue_wait_seconds').buckets;
  assert.equal(waits['+Inf'], 2, 'both dequeues observed once');
  assert.equal(waits['0.5'], 0, 'both waited about the second the test saw them wait');
  assert.equal(sampleValue(workerMetrics, 'agentgate_tasks_finished_total', { status: 'COMPLETED', mode: 'simple' }), 2);
  const again = await scrapeMetrics(`http://127.0.0.1:${metricsPort}`);
  assert.equal(histogramOf(again, 'agentgate_queue_wait_seconds').buckets['+Inf'], 2, 'a later scrape does not observe them again');

  const frontAfter = await scrapeMetrics(front.url);
  assert.equal(frontAfter.agentgate_queue_wait_seconds.metrics.length, 0, 'the enqueuing process dequeued nothing');
  assert.equal(sampleValue(frontAfter, 'agentgate_queue_depth', { queue: TASK_QUEUE }), 0);
  assert.equal(sampleValue(frontAfter, 'agentgate_tasks_finished_total'), 0, 'the process that ran them counts their ends');
  const elsewhere = await fetch(`http://127.0.0.1:${metricsPort}/api/v1/tasks`);
  assert.equal(elsewhere.status, 404, 'the metrics listener serves nothing else');
  assert.equal(typeof (await elsewhere.json()).error, 'string');
});

test('with the database down or frozen, a scrape still answers at once with what it can, and counts the failed reads', { timeout: 120_000 }, async (t) => {
  const postgres = await startOwnPostgres(t);
  const gateway = await startGateway(t, { databaseUrl: postgres.url, env: { DB_CONNECT_TIMEOUT_MS: '1000' } });
  await runTask(gateway, { query: 'before the outage', mode: 'simple' });
  const failures = (metrics: Metrics, read: string) => sampleValue(metrics, 'agentgate_metrics_read_failures_total', { read });

  await postgres.stop();
  const down = await scrapeMetrics(gateway.url);
  assert.equal(down.agentgate_tasks.metrics.length, 0, 'no task counts without a database');
  assert.equal(down.agentgate_queue_depth.metrics.length, 0);
  assert.equal(failures(down, 'tasks'), 1);
  assert.equal(failures(down, 'queues'), 1);
  assert.equal(failures(down, 'queue_wait'), 1);
  assert.equal(sampleValue(down, 'agentgate_tasks_finished_total', { status: 'COMPLETED' }), 1, 'what the process counted is still there');
  assert.ok(sampleValue(down, 'agentgate_process_cpu_seconds_total') > 0);

  await postgres.start();
  await postgres.freeze();
  try {
    const startedAt = Date.now();
    const frozen = await scrapeMetrics(gateway.url);
    assert.ok(Date.now() - startedAt < 3_000, `a scrape answers within 3 s of a frozen database (${Date.now() - startedAt} ms)`);
    assert.equal(failures(frozen, 'tasks'), 2);
  } finally {
    await postgres.thaw();
  }
  const back = await waitFor('the database reads to come back', async () => {
    const metrics = await scrapeMetrics(gateway.url);
    return metrics.agentgate_queue_depth.metrics.length > 0 ? metrics : undefined;
  }, 30_000);
  assert.equal(sampleValue(back, 'agentgate_queue_depth', { queue: TASK_QUEUE }), 0);
  assert.ok(gateway.isRunning());
});

describe('/metrics in production', () => {
  const production = { GATEWAY_ENV: 'production', JWT_SECRET };

  it('without METRICS_TOKEN or METRICS_PORT, refuses with 403 naming both settings', async (t) => {
    const gateway = await startGateway(t, { env: production });
    const answer = await gateway.request('GET', '/metrics');
    assert.equal(answer.status, 403);
    assert.match(answer.body.error, /METRICS_TOKEN/);
    assert.match(answer.body.error, /METRICS_PORT/);
    assert.doesNotMatch(answer.text, /agentgate_/);
  });

  it('with METRICS_TOKEN, answers only the bearer of that token', async (t) => {
    const token = 'scrape-token-0123456789abcdef';
    const gateway = await startGateway(t, { env: { ...production, METRICS_TOKEN: token } });
    const missing = await gateway.request('GET', '/metrics');
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.match(missing.body.error, /METRICS_TOKEN/);
    for (const authorization of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
      assert.equal((await gateway.request('GET', '/metrics', undefined, { authorization })).status, 401, authorization);
    }
    const metrics = await scrapeMetrics(gateway.url, { authorization: `Bearer ${token}` });
    assert.equal(metrics.agentgate_tasks_finished_total.type, 'COUNTER');
  });

  it('with METRICS_PORT, serves /metrics on that listener only, open there as its bind address protects it', async (t) => {
    const metricsPort = await freePort();
    const gateway = await startGateway(t, { env: { ...production, METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' } });
    // Not a route of the API listener: there it is an unknown URL, refused like any other without credentials.
    const onApi = await gateway.request('GET', '/metrics');
    assert.equal(onApi.status, 401);
    assert.doesNotMatch(onApi.text, /agentgate_/);
    const metrics = await scrapeMetrics(`http://127.0.0.1:${metricsPort}`);
    assert.equal(metrics.agentgate_workflows_active.type, 'GAUGE');
  });
});
