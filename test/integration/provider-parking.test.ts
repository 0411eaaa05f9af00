import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { modelCatalogFile } from '../helpers/model-catalog-file.ts';

/**
 * One limited deployment (`primary`, an OpenAI-compatible stand-in) and the mock. With a window of one second, `rpm: 60`
 * paces the deployment at one call a second (`pace` seconds: a window that long with one call in it); a task's call
 * that would wait more than 0.3 s for it parks its task. One worker: a parked task that held it would hold up every
 * other task.
 */
function parkingEnv(t: TestContext, provider: StandIn, pace = 1): Record<string, string> {
  const file = modelCatalogFile(t, [
    'default_tier: small',
    'providers:',
    `  primary: { kind: openai-compatible, base_url_env: OPENAI_COMPATIBLE_PRIMARY_URL, rpm: ${60 / pace} }`,
    '  mock: { kind: mock }',
    'models:',
    '  - { name: model-a, provider: primary, model_id: served-a, tier: small, priority: 1, context_window: 8000, max_output_tokens: 1000, pricing: { input_per_million: 1, output_per_million: 2 } }',
    '  - { name: mock-small, provider: mock, model_id: mock-small, tier: small, priority: 2, context_window: 8000, max_output_tokens: 1000, pricing: { input_per_million: 0, output_per_million: 0 } }',
  ]);
  return {
    MODELS_CONFIG: file, OPENAI_COMPATIBLE_PRIMARY_URL: `${provider.url}/v1`,
    PROVIDER_RATE_WINDOW_SECONDS: String(pace), PROVIDER_PARK_AFTER_SECONDS: '0.3',
    WORKER_CONCURRENCY: '1', TENANT_WORKER_SHARE: '1',
  };
}

async function submit(gateway: Gateway, query: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query, mode: 'simple', ...extra });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id as string;
}

const isTitleCall = (body: any) => /^Write a title/.test(body.messages[0]?.content ?? '');
const queryOf = (body: any): string => body.messages.findLast((message: any) => message.role === 'user').content;
/** The agents' calls the stand-in answered, in the order they reached it. */
const answeredQueries = (provider: StandIn) => provider.requests.filter((request) => !isTitleCall(request.body) && request.status === 200).map((request) => queryOf(request.body));

async function parkedTasks(gateway: Gateway): Promise<number> {
  const { rows } = await gateway.sql.query(`select count(*)::int as count from tasks where parked_at_step is not null and exists (select 1 from task_waits w where w.task_id = tasks.id and w.signal = 'capacity')`);
  return rows[0].count;
}

test('parked-for-capacity tasks hold no worker: with the provider saturated, a task for another provider runs at once, and the parked ones complete later in order of arrival', async (t) => {
  const provider = await startStandIn({ answer: 'Paced answer.', rateLimit: { requests: 2, windowMs: 1000 } });
  t.after(() => provider.close());
  // A call every 3 s: on a loaded machine, the one worker takes the next task and parks it in well under that, so
  // three are parked at once before the first grant (at one a second, a CI run took longer and saw at most two).
  const gateway = await startGateway(t, { env: parkingEnv(t, provider, 3) });
  const queries = Array.from({ length: 5 }, (_, index) => `paced question ${index}`);
  // One at a time: the queue hands the one worker its tasks in this order.
  const ids: string[] = [];
  for (const query of queries) ids.push(await submit(gateway, query, { provider_override: 'primary' }));
  await waitFor('three tasks parked for capacity, more than there are workers', async () => (await parkedTasks(gateway)) >= 3 || undefined, 10_000);

  const startedAt = Date.now();
  const other = await waitForTask(gateway, await submit(gateway, 'a question for the mock', { provider_override: 'mock' }), 10_000);
  const tookMs = Date.now() - startedAt;
  assert.equal(other.status, 'TASK_STATUS_COMPLETED', other.error);
  assert.ok(await parkedTasks(gateway) >= 1, 'tasks were still parked when the other provider\'s task completed');
  t.diagnostic(`the mock's task took ${tookMs} ms beside ${ids.length} tasks waiting for the primary`);
  assert.ok(tookMs < 4_000, `the mock's task took ${tookMs} ms`);

  const tasks = await Promise.all(ids.map((id) => waitForTask(gateway, id, 60_000)));
  assert.deepEqual(tasks.filter((task) => task.status !== 'TASK_STATUS_COMPLETED').map((task) => task.error), [], 'every parked task completed');
  assert.deepEqual(answeredQueries(provider), queries, 'the provider answered the tasks in the order they arrived');
  const { rows: left } = await gateway.sql.query(`select q.*, t.status from provider_capacity_queue q left join tasks t on t.id = q.task_id where q.parked`);
  assert.deepEqual(left, [], 'no parked call is left once every grant was taken');
  assert.equal(provider.stats.rateLimited, 0, 'woken calls kept the deployment\'s pace');

  // A client sees why a parked task streams nothing: one WAITING event per parked call, naming the provider.
  const waits = await Promise.all(ids.map(async (id) => {
    const history = await gateway.request('GET', `/api/v1/tasks/${id}/events`);
    assert.equal(history.status, 200, history.text);
    return history.body.events.filter((event: any) => event.type === 'WAITING');
  }));
  assert.ok(waits.filter((events) => events.length > 0).length >= 3, `three or more tasks said they waited: ${JSON.stringify(waits)}`);
  for (const events of waits.filter((found) => found.length > 0)) {
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.deepEqual([events[0].agent_id, events[0].message, events[0].payload], ['simple-agent', 'Waiting for capacity at provider primary', { reason: 'provider_capacity', provider: 'primary' }]);
  }
});

test('tasks parked for capacity survive a kill -9 of their process: a restarted one grants and wakes them all; a cancelled one is not woken', async (t) => {
  const provider = await startStandIn({ answer: 'After the restart.' });
  t.after(() => provider.close());
  const env = parkingEnv(t, provider);
  const first = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'parking-a' } });
  const ids: string[] = [];
  for (const query of ['kept 0', 'kept 1', 'kept 2', 'kept 3', 'cancelled while parked']) ids.push(await submit(first, query, { provider_override: 'primary' }));
  const cancelled = ids.at(-1)!;
  await waitFor('the last task parked', async () => {
    const { rows } = await first.sql.query(`select 1 from provider_capacity_queue where task_id = $1 and parked and granted_at is null`, [cancelled]);
    return rows.length > 0 || undefined;
  }, 10_000);
  const cancel = await first.request('POST', `/api/v1/tasks/${cancelled}/cancel`, {});
  assert.equal(cancel.status, 200, cancel.text);
  const { rows: [waiting] } = await first.sql.query(`select count(*)::int as count from provider_capacity_queue where parked and granted_at is null and task_id <> $1`, [cancelled]);
  await first.kill('SIGKILL');
  assert.ok(waiting.count >= 1, 'tasks were still waiting for a grant when their process died');

  const second = await startGateway(t, { databaseUrl: first.databaseUrl, env: { ...env, EXECUTOR_ID: 'parking-b' } });
  const tasks = await Promise.all(ids.map((id) => waitForTask(second, id, 30_000)));
  assert.deepEqual(tasks.slice(0, 4).map((task) => [task.status, task.result]), Array(4).fill(['TASK_STATUS_COMPLETED', 'After the restart.']));
  assert.equal(tasks[4].status, 'TASK_STATUS_CANCELLED');
  await sleep(1_500);
  assert.ok(!answeredQueries(provider).includes('cancelled while parked'), 'the cancelled task never called the provider');
  const { rows: left } = await second.sql.query(`select * from provider_capacity_queue where parked`);
  assert.deepEqual(left, []);
});

test('a task paused while parked for capacity is not woken by its grant: it stays paused, and after the resume its call uses the grant', async (t) => {
  const provider = await startStandIn({ answer: 'Resumed answer.' });
  t.after(() => provider.close());
  const gateway = await startGateway(t, { env: parkingEnv(t, provider) });
  const ids: string[] = [];
  for (const query of ['runs first', 'waits its turn', 'paused while parked']) ids.push(await submit(gateway, query, { provider_override: 'primary' }));
  const paused = ids[2];
  await waitFor('the last task parked', async () => {
    const { rows } = await gateway.sql.query(`select 1 from provider_capacity_queue where task_id = $1 and parked and granted_at is null`, [paused]);
    return rows.length > 0 || undefined;
  }, 10_000);
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${paused}/pause`)).status, 202);
  await waitFor('its grant', async () => {
    const { rows } = await gateway.sql.query(`select 1 from provider_capacity_queue where task_id = $1 and granted_at is not null`, [paused]);
    return rows.length > 0 || undefined;
  }, 15_000);
  for (const id of ids.slice(0, 2)) assert.equal((await waitForTask(gateway, id, 15_000)).status, 'TASK_STATUS_COMPLETED');
  await sleep(1_000);
  const { rows: [row] } = await gateway.sql.query(`select status from tasks where id = $1`, [paused]);
  assert.equal(row.status, 'PAUSED');
  assert.ok(!answeredQueries(provider).includes('paused while parked'), 'the paused task made no call');

  assert.equal((await gateway.request('POST', `/api/v1/tasks/${paused}/resume`)).status, 202);
  const resumed = await waitForTask(gateway, paused, 15_000);
  assert.equal(resumed.status, 'TASK_STATUS_COMPLETED', resumed.error);
  assert.equal(resumed.result, 'Resumed answer.');
  const { rows: left } = await gateway.sql.query(`select 1 from provider_capacity_queue where task_id = $1`, [paused]);
  assert.equal(left.length, 0, 'the grant was used');
});
