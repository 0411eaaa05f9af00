import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { modelCatalogFile } from '../helpers/model-catalog-file.ts';

/**
 * A provider's incident with one deployment configured (the common case): every call answers 529 for a while. A
 * task's call that has run through its retries does not fail its task: the task parks, holding no worker, and its
 * call is tried again once the deployment's cooldown is over, until PROVIDER_OUTAGE_WAIT_SECONDS have passed since
 * its first failure. Short settings: one retry, a cooldown after two failures, lasting one second.
 */
function outageEnv(t: TestContext, provider: StandIn, outageWaitSeconds: number): Record<string, string> {
  const file = modelCatalogFile(t, [
    'default_tier: small',
    'providers:',
    '  primary: { kind: openai-compatible, base_url_env: OUTAGE_PRIMARY_URL }',
    '  mock: { kind: mock }',
    'models:',
    '  - { name: model-a, provider: primary, model_id: served-a, tier: small, priority: 1, context_window: 8000, max_output_tokens: 1000, pricing: { input_per_million: 1, output_per_million: 2 } }',
    '  - { name: mock-small, provider: mock, model_id: mock-small, tier: small, priority: 2, context_window: 8000, max_output_tokens: 1000, pricing: { input_per_million: 0, output_per_million: 0 } }',
  ]);
  return {
    MODELS_CONFIG: file, OUTAGE_PRIMARY_URL: `${provider.url}/v1`,
    PROVIDER_RETRIES: '1', PROVIDER_COOLDOWN_FAILURES: '2', PROVIDER_COOLDOWN_SECONDS: '1', PROVIDER_OUTAGE_WAIT_SECONDS: String(outageWaitSeconds),
    WORKER_CONCURRENCY: '1', TENANT_WORKER_SHARE: '1',
  };
}

const overloadedWhile = (isOverloaded: () => boolean) => () =>
  (isOverloaded() ? { status: 529, message: 'Overloaded', type: 'overloaded_error' } : undefined);

async function submit(gateway: Gateway, query: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query, mode: 'simple', ...extra });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id as string;
}

async function isWaitingOutOutage(gateway: Gateway, taskId: string): Promise<boolean> {
  const { rows } = await gateway.sql.query(
    `select 1 from tasks t join task_waits w on w.task_id = t.id and w.signal like 'provider-outage:%' and w.due_at is not null
     where t.id = $1 and t.parked_at_step is not null`, [taskId]);
  return rows.length > 0;
}

async function outageEvents(gateway: Gateway, taskId: string) {
  const history = await gateway.request('GET', `/api/v1/tasks/${taskId}/events`);
  assert.equal(history.status, 200, history.text);
  return (history.body.events as Array<{ type: string; agent_id: string | null; payload?: Record<string, unknown> }>)
    .filter((event) => event.type === 'WAITING' && event.payload?.reason === 'provider_outage');
}

test('an outage of the only deployment: the task parks holding no worker, a task for another provider runs meanwhile, and the call is tried again and completes once the provider recovers, across a crash of the process', async (t) => {
  let overloaded = true;
  const provider = await startStandIn({ answer: 'Answered after the outage.', script: overloadedWhile(() => overloaded) });
  t.after(() => provider.close());
  const gateway = await startGateway(t, { env: outageEnv(t, provider, 120) });
  const taskId = await submit(gateway, 'a question during the outage', { provider_override: 'primary' });
  await waitFor('the task parked for the outage', async () => (await isWaitingOutOutage(gateway, taskId)) || undefined, 15_000);

  // One worker: had the parked task kept it, this one would wait for the outage to end.
  const other = await waitForTask(gateway, await submit(gateway, 'a question for the mock', { provider_override: 'mock' }), 10_000);
  assert.equal(other.status, 'TASK_STATUS_COMPLETED', other.error);
  const [waiting] = await outageEvents(gateway, taskId);
  assert.ok(waiting, 'a WAITING event says why the agent is quiet');
  assert.match(String(waiting.payload!.error), /primary\/model-a: overloaded \(HTTP 529\)/);
  assert.ok(Date.parse(String(waiting.payload!.gives_up_at)) > Date.now() + 60_000, 'and until when the call is tried');
  // Parked again and again while the outage lasts: a scrape during one of those waits shows it.
  await waitFor('an operator to see the call waiting out the outage', async () =>
    /^agentgate_task_waits\{wait="provider-outage"\} 1$/m.test((await gateway.request('GET', '/metrics')).text) || undefined, 15_000);
  const callsBefore = provider.requests.length;
  await waitFor('the call tried again while the outage lasts', async () => provider.requests.length > callsBefore || undefined, 15_000);
  assert.equal((await gateway.request('GET', `/api/v1/tasks/${taskId}`)).body.status !== 'TASK_STATUS_FAILED', true, 'still not failed');

  // A crash while the task waits: the wait and its moment are in the database, and the restarted process keeps them.
  await waitFor('the task parked again', async () => (await isWaitingOutOutage(gateway, taskId)) || undefined, 15_000);
  await gateway.kill();
  overloaded = false;
  await gateway.restart();
  const task = await waitForTask(gateway, taskId, 30_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.result, 'Answered after the outage.');
  assert.equal((await outageEvents(gateway, taskId)).length, 1, 'one WAITING event for the call, however often it parked');
});

test('a planned task: the agent whose calls fail waits out the outage, parked, while the other completes, and its answer joins the synthesis', async (t) => {
  let overloaded = true;
  const plan = { complexity_score: 0.7, execution_strategy: 'parallel', subtasks: [{ id: 'a', description: 'first part' }, { id: 'b', description: 'second part' }] };
  // An agent's call, not the planner's (JSON) nor the synthesis' (whose prompt lists the parts too).
  const isAgentCall = (body: any, part: string) =>
    body.response_format === undefined && /^You are a capable assistant/.test(body.messages[0]?.content ?? '') && JSON.stringify(body.messages).includes(part);
  const provider = await startStandIn({
    answer: 'Part done.',
    // The planner asks for JSON of its schema; the agents and the synthesis for text.
    reply: (body) => (body.response_format !== undefined ? { content: JSON.stringify(plan) } : undefined),
    script: (_index, body) => (overloaded && isAgentCall(body, 'second part') ? { status: 529, message: 'Overloaded', type: 'overloaded_error' } : undefined),
  });
  t.after(() => provider.close());
  const gateway = await startGateway(t, { env: outageEnv(t, provider, 120) });
  const taskId = await submit(gateway, 'do the two parts', { mode: 'standard' });
  await waitFor('agent b parked for the outage', async () => (await isWaitingOutOutage(gateway, taskId)) || undefined, 15_000);
  overloaded = false;
  const task = await waitForTask(gateway, taskId, 30_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const waits = await outageEvents(gateway, taskId);
  assert.deepEqual(waits.map((event) => event.agent_id), ['b'], 'only agent b waited');
  const callsOf = (part: string) => provider.requests.filter((request) => isAgentCall(request.body, part));
  assert.deepEqual(callsOf('first part').map((request) => request.status), [200], 'agent a answered once, not again after b\'s wait');
  assert.ok(callsOf('second part').filter((request) => request.status === 529).length >= 2);
  assert.equal(callsOf('second part').at(-1)!.status, 200, 'agent b answered once the provider recovered');
  const syntheses = provider.requests.filter((request) => /^You combine/.test(request.body.messages[0]?.content ?? ''));
  assert.equal(syntheses.length, 1, 'one synthesis, after both agents');
  assert.ok(syntheses[0].at > callsOf('second part').at(-1)!.at);
});

test('an outage longer than PROVIDER_OUTAGE_WAIT_SECONDS fails the task, naming the provider, the model, the reason and how long it was tried', async (t) => {
  const provider = await startStandIn({ answer: 'Never answered.', script: overloadedWhile(() => true) });
  t.after(() => provider.close());
  const gateway = await startGateway(t, { env: outageEnv(t, provider, 4) });
  const startedAt = Date.now();
  const task = await waitForTask(gateway, await submit(gateway, 'a question that outlasts the wait', { provider_override: 'primary' }), 30_000);
  assert.equal(task.status, 'TASK_STATUS_FAILED');
  assert.match(task.error, /primary\/model-a: overloaded \(HTTP 529\).*still failing after [45] s \(PROVIDER_OUTAGE_WAIT_SECONDS\)/);
  assert.ok(Date.now() - startedAt >= 4_000, 'tried for the whole wait');
  assert.ok(provider.requests.length >= 4, `tried again after parking (${provider.requests.length} calls)`);
  const { rows } = await gateway.sql.query(`select count(*)::int as count from task_waits where task_id = $1`, [task.task_id]);
  assert.equal(rows[0].count, 0, 'no wait is left open');
});

test('a refusal (400) is not waited out: the task fails at once', async (t) => {
  const provider = await startStandIn({ answer: 'Never answered.', script: () => ({ status: 400, message: 'Invalid value for temperature', type: 'invalid_request_error' }) });
  t.after(() => provider.close());
  const gateway = await startGateway(t, { env: outageEnv(t, provider, 120) });
  const task = await waitForTask(gateway, await submit(gateway, 'a refused question', { provider_override: 'primary' }), 15_000);
  assert.equal(task.status, 'TASK_STATUS_FAILED');
  assert.match(task.error, /bad request \(HTTP 400\)/);
  assert.equal((await outageEvents(gateway, task.task_id)).length, 0);
});

test('a task waiting out an outage is cancelled at once, and its call is not tried again', async (t) => {
  const provider = await startStandIn({ answer: 'Never answered.', script: overloadedWhile(() => true) });
  t.after(() => provider.close());
  const gateway = await startGateway(t, { env: outageEnv(t, provider, 120) });
  const taskId = await submit(gateway, 'a question cancelled during the outage', { provider_override: 'primary' });
  await waitFor('the task parked for the outage', async () => (await isWaitingOutOutage(gateway, taskId)) || undefined, 15_000);
  const cancel = await gateway.request('POST', `/api/v1/tasks/${taskId}/cancel`, {});
  assert.equal(cancel.status, 200, cancel.text);
  const task = await waitForTask(gateway, taskId, 5_000);
  assert.equal(task.status, 'TASK_STATUS_CANCELLED');
  const callsAtCancel = provider.requests.length;
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  assert.equal(provider.requests.length, callsAtCancel, 'no call after the cancel');
  const { rows } = await gateway.sql.query(`select count(*)::int as count from task_waits where task_id = $1`, [taskId]);
  assert.equal(rows[0].count, 0);
});
