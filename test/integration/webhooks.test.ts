import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startDnsStandIn, type DnsStandIn } from '../fixtures/dns-stand-in.ts';
import { addMember, registerAccount, withKey } from '../helpers/accounts.ts';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

interface Receipt { headers: http.IncomingHttpHeaders; body: string }

/**
 * A webhook receiver on 127.0.0.1 (or `host`): it records every request and answers with the next status of
 * `answers` for its path (200 once they run out).
 */
async function startReceiver(host = '127.0.0.1') {
  const receipts = new Map<string, Receipt[]>();
  const answers = new Map<string, number[]>();
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      const path = request.url ?? '/';
      receipts.set(path, [...receipts.get(path) ?? [], { headers: request.headers, body }]);
      const status = answers.get(path)?.shift() ?? 200;
      // A negative status: answer 200 only after that many milliseconds (a receiver too slow for WEBHOOK_TIMEOUT_MS).
      if (status < 0) setTimeout(() => response.writeHead(200).end(), -status);
      else response.writeHead(status).end();
    });
  });
  server.listen(0, host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://${host}:${port}${path}`,
    receipts: (path: string) => receipts.get(path) ?? [],
    answer: (path: string, statuses: number[]) => answers.set(path, [...statuses]),
    close: () => server.close(),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

function verify(secret: string, receipt: Receipt): any {
  return new Webhook(secret).verify(receipt.body, {
    'webhook-id': String(receipt.headers['webhook-id']),
    'webhook-timestamp': String(receipt.headers['webhook-timestamp']),
    'webhook-signature': String(receipt.headers['webhook-signature']),
  });
}

async function subscribe(gateway: Gateway, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const answer = await gateway.request('POST', '/api/v1/webhooks', body, headers);
  assert.equal(answer.status, 201, answer.text);
  return answer.body as { id: string; secret: string };
}

async function completedTask(gateway: Gateway, query: string, extra: Record<string, unknown> = {}) {
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query, ...extra });
  assert.equal(submitted.status, 200, submitted.text);
  await waitForTask(gateway, submitted.body.task_id);
  return submitted.body as { task_id: string; webhook_id?: string; webhook_secret?: string };
}

const deliveriesOf = async (gateway: Gateway, webhookId: string) => {
  const answer = await gateway.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.deliveries as any[];
};

const RETRY_DELAYS_MS = '300,300,300,300';
const TIMEOUT_MS = 1500;

describe('signed webhooks delivered to a receiver on 127.0.0.1', { timeout: 180_000 }, () => {
  let receiver: Receiver;
  before(async () => { receiver = await startReceiver(); });
  after(() => receiver.close());
  const gateway = useGateway({ env: { TOOLS_NETWORK_ALLOW: '127.0.0.1', WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS_MS, WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });

  it('delivers task.completed with a signature the Standard Webhooks library verifies; a wrong secret fails it', async () => {
    const webhook = await subscribe(gateway(), { url: receiver.url('/completed'), events: ['task.completed'] });
    assert.match(webhook.secret, /^whsec_/);
    const task = await completedTask(gateway(), 'webhook me');
    const [receipt] = await waitFor('the delivery', async () => (receiver.receipts('/completed').length > 0 ? receiver.receipts('/completed') : undefined));
    const message = verify(webhook.secret, receipt);
    assert.equal(message.type, 'task.completed');
    assert.equal(message.data.task_id, task.task_id);
    assert.equal(message.data.status, 'COMPLETED');
    assert.match(message.data.result, /webhook me/);
    assert.throws(() => verify(`whsec_${Buffer.from('another secret of 24 byt').toString('base64')}`, receipt), /signature/i);
    const deliveries = await waitFor('the delivery to be recorded as succeeded', async () => {
      const listed = await deliveriesOf(gateway(), webhook.id);
      return listed[0]?.status === 'succeeded' ? listed : undefined;
    });
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0].id, receipt.headers['webhook-id']);
    assert.deepEqual(deliveries[0].attempts.map((attempt: any) => attempt.status_code), [200]);
  });

  it('a receiver answering 500 three times then 200 gets the event four times under one webhook-id, then never again', async () => {
    receiver.answer('/flaky', [500, 500, 500]);
    const webhook = await subscribe(gateway(), { url: receiver.url('/flaky'), events: ['task.completed', 'task.failed'] });
    await completedTask(gateway(), 'flaky receiver');
    await waitFor('four attempts', async () => (receiver.receipts('/flaky').length >= 4 ? true : undefined));
    const [delivery] = await waitFor('the delivery to succeed', async () => {
      const listed = await deliveriesOf(gateway(), webhook.id);
      return listed[0]?.status === 'succeeded' ? listed : undefined;
    });
    assert.deepEqual(delivery.attempts.map((attempt: any) => attempt.status_code), [500, 500, 500, 200]);
    // Longer than the whole retry schedule: nothing more comes.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const receipts = receiver.receipts('/flaky');
    assert.equal(receipts.length, 4);
    assert.equal(new Set(receipts.map((receipt) => receipt.headers['webhook-id'])).size, 1);
    for (const receipt of receipts) assert.equal(verify(webhook.secret, receipt).type, 'task.completed');
  });

  it('an attempt the receiver does not answer within WEBHOOK_TIMEOUT_MS has failed and is retried', async () => {
    receiver.answer('/slow', [-(TIMEOUT_MS + 1500)]);
    const webhook = await subscribe(gateway(), { url: receiver.url('/slow'), events: ['task.completed'] });
    await completedTask(gateway(), 'slow receiver');
    const [delivery] = await waitFor('the retry to succeed', async () => {
      const listed = await deliveriesOf(gateway(), webhook.id);
      return listed[0]?.status === 'succeeded' ? listed : undefined;
    });
    assert.deepEqual(delivery.attempts.map((attempt: any) => attempt.status_code), [null, 200]);
    assert.match(delivery.attempts[0].error, new RegExp(`timed out after ${TIMEOUT_MS} ms \\(WEBHOOK_TIMEOUT_MS\\)`));
    const receipts = receiver.receipts('/slow');
    assert.equal(receipts.length, 2);
    assert.equal(receipts[0].headers['webhook-id'], receipts[1].headers['webhook-id']);
  });

  it('a subscription that fails every attempt is disabled with a reason; its failed delivery can be replayed', async () => {
    receiver.answer('/down', Array(5).fill(503));
    const webhook = await subscribe(gateway(), { url: receiver.url('/down'), events: ['task.completed'] });
    await completedTask(gateway(), 'receiver down');
    const disabled = await waitFor('the subscription to be disabled', async () => {
      const answer = await gateway().request('GET', `/api/v1/webhooks/${webhook.id}`);
      return answer.body.enabled === false ? answer.body : undefined;
    });
    assert.match(disabled.disabled_reason, /failed at every attempt.*503/);
    const [failed] = await deliveriesOf(gateway(), webhook.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.attempts.length, 5);
    // Disabled: no new deliveries, and a replay asks for it to be enabled first.
    const refused = await gateway().request('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${failed.id}/replay`);
    assert.equal(refused.status, 409, refused.text);
    const enabled = await gateway().request('PATCH', `/api/v1/webhooks/${webhook.id}`, { enabled: true });
    assert.equal(enabled.status, 200, enabled.text);
    assert.equal(enabled.body.disabled_reason, null);
    const replayed = await gateway().request('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${failed.id}/replay`);
    assert.equal(replayed.status, 202, replayed.text);
    assert.equal(replayed.body.round, 2);
    await waitFor('the replay to arrive', async () => (receiver.receipts('/down').length === 6 ? true : undefined));
    const last = receiver.receipts('/down').at(-1)!;
    assert.equal(last.headers['webhook-id'], failed.id);
    assert.equal(verify(webhook.secret, last).type, 'task.completed');
    const [succeeded] = await waitFor('the replay to be recorded', async () => {
      const listed = await deliveriesOf(gateway(), webhook.id);
      return listed[0]?.status === 'succeeded' ? listed : undefined;
    });
    assert.deepEqual(succeeded.attempts.map((attempt: any) => attempt.round), [1, 1, 1, 1, 1, 2]);
    const again = await gateway().request('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${failed.id}/replay`);
    assert.equal(again.status, 409, 'a succeeded delivery is not replayed');
  });

  it('after a rotation each delivery carries signatures by the new and the old secret', async () => {
    const webhook = await subscribe(gateway(), { url: receiver.url('/rotated'), events: ['task.completed'] });
    const rotated = await gateway().request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.body.secret, webhook.secret);
    await completedTask(gateway(), 'rotation');
    const [receipt] = await waitFor('the delivery', async () => (receiver.receipts('/rotated').length > 0 ? receiver.receipts('/rotated') : undefined));
    assert.equal(String(receipt.headers['webhook-signature']).split(' ').length, 2);
    assert.equal(verify(rotated.body.secret, receipt).type, 'task.completed');
    assert.equal(verify(webhook.secret, receipt).type, 'task.completed');
  });

  it('a task submitted with webhook_url sends its events there, signed with the secret of the answer', async () => {
    const task = await completedTask(gateway(), 'own webhook', { webhook_url: receiver.url('/own') });
    assert.ok(task.webhook_id && task.webhook_secret);
    const [receipt] = await waitFor('the delivery', async () => (receiver.receipts('/own').length > 0 ? receiver.receipts('/own') : undefined));
    const message = verify(task.webhook_secret, receipt);
    assert.equal(message.type, 'task.completed');
    assert.equal(message.data.task_id, task.task_id);
    const other = await completedTask(gateway(), 'not this one');
    assert.ok(receiver.receipts('/own').every((entry) => JSON.parse(entry.body).data.task_id !== other.task_id));
  });

  it('a session filter delivers that session\'s tasks only; a cancelled task sends task.cancelled', async () => {
    const webhook = await subscribe(gateway(), { url: receiver.url('/session'), events: ['task.cancelled', 'task.completed'], session_id: 'hook-session' });
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow', session_id: 'hook-session', context: { mock_delay_ms: 60_000 } });
    const cancelled = await gateway().request('POST', `/api/v1/tasks/${submitted.body.task_id}/cancel`, {});
    assert.ok([200, 202].includes(cancelled.status), cancelled.text);
    await completedTask(gateway(), 'elsewhere');
    const [receipt] = await waitFor('the delivery', async () => (receiver.receipts('/session').length > 0 ? receiver.receipts('/session') : undefined));
    const message = verify(webhook.secret, receipt);
    assert.equal(message.type, 'task.cancelled');
    assert.equal(message.data.task_id, submitted.body.task_id);
  });

  it('sends approval.requested, review.plan_ready, budget.threshold and schedule.paused as they happen', async () => {
    const webhook = await subscribe(gateway(), { url: receiver.url('/others'), events: ['approval.requested', 'review.plan_ready', 'budget.threshold', 'schedule.paused'] });
    const messages = () => receiver.receipts('/others').map((receipt) => verify(webhook.secret, receipt));
    const approval = await gateway().request('POST', '/api/v1/tasks', { query: 'needs a yes', mode: 'simple', context: { require_approval: true } });
    const requested = await waitFor('approval.requested', async () => messages().find((message) => message.type === 'approval.requested'));
    assert.equal(requested.data.task_id, approval.body.task_id);
    assert.ok(requested.data.event.payload.approval_id);
    const research = await gateway().request('POST', '/api/v1/tasks', {
      query: 'Which renewable sources give electricity day and night?', context: { force_research: true, research_strategy: 'quick', require_review: true },
    });
    const planReady = await waitFor('review.plan_ready', async () => messages().find((message) => message.type === 'review.plan_ready'), 60_000);
    assert.equal(planReady.data.task_id, research.body.task_id);
    assert.equal(planReady.data.event.type, 'RESEARCH_PLAN_READY');
    const budget = await gateway().request('POST', '/api/v1/tasks', { query: 'a question that needs more tokens than allowed', context: { token_budget: 20 } });
    const threshold = await waitFor('budget.threshold', async () => messages().find((message) => message.type === 'budget.threshold'));
    assert.equal(threshold.data.task_id, budget.body.task_id);
    assert.equal(threshold.data.event.type, 'BUDGET_THRESHOLD');
    const schedule = await gateway().request('POST', '/api/v1/schedules', { name: 'hooked', cron_expression: '0 8 * * *', task_query: 'daily' });
    assert.equal(schedule.status, 201, schedule.text);
    const paused = await gateway().request('POST', `/api/v1/schedules/${schedule.body.schedule_id}/pause`, { reason: 'holiday' });
    assert.equal(paused.status, 200, paused.text);
    const pausedEvent = await waitFor('schedule.paused', async () => messages().find((message) => message.type === 'schedule.paused'));
    assert.deepEqual([pausedEvent.data.schedule_id, pausedEvent.data.reason], [schedule.body.schedule_id, 'holiday']);
    await gateway().request('POST', `/api/v1/tasks/${approval.body.task_id}/cancel`, {});
    await gateway().request('POST', `/api/v1/tasks/${budget.body.task_id}/cancel`, {});
    await gateway().request('POST', `/api/v1/tasks/${research.body.task_id}/cancel`, {});
    assert.ok(messages().every((message) => ['approval.requested', 'review.plan_ready', 'budget.threshold', 'schedule.paused'].includes(message.type)), 'only the events asked for');
  });

  it('refuses private, loopback and metadata addresses that the guard does not allow, and bad fields, naming them', async () => {
    for (const url of ['http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://[::1]:8080/hook', 'http://192.168.0.10/hook', 'ftp://127.0.0.1/hook']) {
      const answer = await gateway().request('POST', '/api/v1/webhooks', { url, events: ['task.completed'] });
      assert.equal(answer.status, 400, `${url}: ${answer.text}`);
      assert.match(answer.body.error, /^url: refused/);
    }
    const viaTask = await gateway().request('POST', '/api/v1/tasks', { query: 'x', webhook_url: 'http://10.0.0.1/hook' });
    assert.equal(viaTask.status, 400);
    assert.match(viaTask.body.error, /^webhook_url: refused/);
    const unknownEvent = await gateway().request('POST', '/api/v1/webhooks', { url: receiver.url('/x'), events: ['task.exploded'] });
    assert.equal(unknownEvent.status, 400);
    assert.match(unknownEvent.body.error, /events/);
    const unknownField = await gateway().request('POST', '/api/v1/webhooks', { url: receiver.url('/x'), events: ['task.completed'], colour: 'red' });
    assert.equal(unknownField.status, 400);
    assert.match(unknownField.body.error, /colour/);
    const missing = await gateway().request('GET', '/api/v1/webhooks/00000000-0000-0000-0000-0000000000aa');
    assert.equal(missing.status, 404);
  });

});

describe('webhook subscriptions between tenants and roles', { timeout: 120_000 }, () => {
  let receiver: Receiver;
  before(async () => { receiver = await startReceiver(); });
  after(() => receiver.close());
  const gateway = useGateway({ env: { TOOLS_NETWORK_ALLOW: '127.0.0.1', GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' } });

  it('another tenant cannot see or change a subscription (404); a member may not manage them (403)', async () => {
    const owner = await registerAccount(gateway(), 'hook-owner');
    const stranger = await registerAccount(gateway(), 'hook-stranger');
    const member = await addMember(gateway(), owner, 'hook-member');
    const webhook = await subscribe(gateway(), { url: receiver.url('/tenant'), events: ['task.completed'] }, withKey(owner));
    const listed = await gateway().request('GET', '/api/v1/webhooks', undefined, withKey(owner));
    assert.deepEqual(listed.body.webhooks.map((entry: any) => entry.id), [webhook.id]);
    assert.equal('secret' in listed.body.webhooks[0], false, 'the secret is shown only on creation and rotation');
    const strangers = await gateway().request('GET', '/api/v1/webhooks', undefined, withKey(stranger));
    assert.deepEqual(strangers.body.webhooks, []);
    for (const [method, path, body] of [
      ['GET', `/api/v1/webhooks/${webhook.id}`, undefined],
      ['PATCH', `/api/v1/webhooks/${webhook.id}`, { description: 'mine now' }],
      ['DELETE', `/api/v1/webhooks/${webhook.id}`, undefined],
      ['GET', `/api/v1/webhooks/${webhook.id}/deliveries`, undefined],
      ['POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, undefined],
    ] as const) {
      const answer = await gateway().request(method, path, body, withKey(stranger));
      assert.equal(answer.status, 404, `${method} ${path}: ${answer.text}`);
    }
    const byMember = await gateway().request('GET', '/api/v1/webhooks', undefined, withKey(member));
    assert.equal(byMember.status, 403);
    const deleted = await gateway().request('DELETE', `/api/v1/webhooks/${webhook.id}`, undefined, withKey(owner));
    assert.equal(deleted.status, 200, deleted.text);
    const gone = await gateway().request('GET', `/api/v1/webhooks/${webhook.id}`, undefined, withKey(owner));
    assert.equal(gone.status, 404);
  });
});

test('a kill -9 of the gateway between attempts loses nothing: the retries go on after the restart', { timeout: 180_000 }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.answer('/crash', [500, 500]);
  const gateway = await startGateway(t, { env: { TOOLS_NETWORK_ALLOW: '127.0.0.1', WEBHOOK_RETRY_DELAYS_MS: '3000,3000,3000', WEBHOOK_POLL_INTERVAL_MS: '100' } });
  const webhook = await subscribe(gateway, { url: receiver.url('/crash'), events: ['task.completed'] });
  await completedTask(gateway, 'crash between attempts');
  // Killed once the first attempt is recorded, while the workflow sleeps before the second.
  await waitFor('the first attempt to be recorded', async () => ((await deliveriesOf(gateway, webhook.id))[0]?.attempts.length === 1 ? true : undefined));
  await gateway.kill('SIGKILL');
  assert.equal(receiver.receipts('/crash').length, 1);
  await gateway.restart();
  await waitFor('the delivery to succeed after the restart', async () => {
    const listed = await deliveriesOf(gateway, webhook.id);
    return listed[0]?.status === 'succeeded' ? true : undefined;
  }, 60_000);
  const receipts = receiver.receipts('/crash');
  assert.equal(receipts.length, 3, 'two failures, then the success');
  assert.equal(new Set(receipts.map((receipt) => receipt.headers['webhook-id'])).size, 1);
  const [delivery] = await deliveriesOf(gateway, webhook.id);
  assert.deepEqual(delivery.attempts.map((attempt: any) => attempt.status_code), [500, 500, 200]);
});

test('deliveries enqueued before a kill -9 go out after it, each exactly once, with two processes picking them up', { timeout: 180_000 }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const env = { TOOLS_NETWORK_ALLOW: '127.0.0.1', WEBHOOK_RETRY_DELAYS_MS: '500' };
  // This process picks deliveries up only at its start: the ones its tasks enqueue wait in the outbox.
  const first = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'outbox-a', WEBHOOK_POLL_INTERVAL_MS: '60000' } });
  await subscribe(first, { url: receiver.url('/outbox'), events: ['task.completed'] });
  const tasks = await Promise.all(Array.from({ length: 10 }, (_, index) => completedTask(first, `outbox ${index}`)));
  const { rows: waiting } = await first.sql.query(`select count(*)::int as count from webhook_deliveries where status = 'pending' and started_round is null`);
  assert.equal(waiting[0].count, 10, 'enqueued with the tasks\' ends, not yet started');
  await first.kill('SIGKILL');
  assert.equal(receiver.receipts('/outbox').length, 0);
  const second = await startGateway(t, { databaseUrl: first.databaseUrl, env: { ...env, EXECUTOR_ID: 'outbox-b', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  await first.restart();
  await waitFor('every delivery to succeed', async () => {
    const { rows } = await second.sql.query(`select count(*)::int as count from webhook_deliveries where status = 'succeeded'`);
    return rows[0].count === 10 ? true : undefined;
  }, 60_000);
  const receipts = receiver.receipts('/outbox');
  assert.equal(receipts.length, 10, 'each event sent once');
  assert.equal(new Set(receipts.map((receipt) => receipt.headers['webhook-id'])).size, 10);
  assert.deepEqual(receipts.map((receipt) => JSON.parse(receipt.body).data.task_id).sort(), tasks.map((task) => task.task_id).sort());
});

test('a worker killed -9 between attempts and never restarted: another process takes the delivery over', { timeout: 180_000 }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.answer('/dead', [500]);
  // The wait before the second attempt outlasts the second process's start.
  const env = { TOOLS_NETWORK_ALLOW: '127.0.0.1', WEBHOOK_RETRY_DELAYS_MS: '12000,12000', WEBHOOK_POLL_INTERVAL_MS: '100', EXECUTOR_DEAD_AFTER_SECONDS: '3' };
  const first = await startGateway(t, { env: { ...env, EXECUTOR_ID: 'hooks-a' } });
  const webhook = await subscribe(first, { url: receiver.url('/dead'), events: ['task.completed'] });
  await completedTask(first, 'the first worker dies');
  await waitFor('the first attempt to be recorded', async () => ((await deliveriesOf(first, webhook.id))[0]?.attempts.length === 1 ? true : undefined));
  const second = await startGateway(t, { databaseUrl: first.databaseUrl, env: { ...env, EXECUTOR_ID: 'hooks-b' } });
  const { rows: before } = await first.sql.query(`select status, executor_id from dbos.workflow_status where workflow_uuid like 'webhook:%'`);
  assert.deepEqual(before, [{ status: 'PENDING', executor_id: 'hooks-a' }], 'the first process holds the delivery, asleep');
  await first.kill('SIGKILL');
  assert.equal(receiver.receipts('/dead').length, 1);
  await waitFor('the delivery to succeed on the other process', async () => {
    const listed = await deliveriesOf(second, webhook.id);
    return listed[0]?.status === 'succeeded' ? true : undefined;
  }, 60_000);
  assert.deepEqual(receiver.receipts('/dead').map((receipt) => receipt.headers['webhook-id']), Array(2).fill(receiver.receipts('/dead')[0].headers['webhook-id']));
  const { rows } = await second.sql.query(`select executor_id from dbos.workflow_status where workflow_uuid like 'webhook:%'`);
  assert.deepEqual(rows.map((row) => row.executor_id), ['hooks-b']);
});

describe('a webhook host that comes to resolve to a private address', { timeout: 120_000 }, () => {
  // The allowed receiver listens on 127.0.0.2; a loopback-only one on 127.0.0.1 with the same port must never be reached.
  const env: Record<string, string> = { TOOLS_NETWORK_ALLOW: '127.0.0.2', WEBHOOK_RETRY_DELAYS_MS: '200', WEBHOOK_POLL_INTERVAL_MS: '100' };
  let allowed: Receiver;
  let loopbackHits = 0;
  const loopbackOnly = http.createServer((_request, response) => { loopbackHits++; response.end(); });
  let dns: DnsStandIn;
  before(async () => {
    allowed = await startReceiver('127.0.0.2');
    loopbackOnly.listen(allowed.port, '127.0.0.1');
    await once(loopbackOnly, 'listening');
    // The first answer (the check at creation) is the allowed address; every later one, loopback.
    dns = await startDnsStandIn((name, questionNumber) => (name === 'hook.rebind.test' ? (questionNumber === 1 ? '127.0.0.2' : '127.0.0.1') : undefined));
    env.TOOLS_DNS_SERVERS = dns.address;
  });
  after(() => {
    allowed.close();
    loopbackOnly.close();
    dns.close();
  });
  const gateway = useGateway({ env });

  it('is refused at delivery time, and the refusal is recorded as the attempt\'s error', async () => {
    const webhook = await subscribe(gateway(), { url: `http://hook.rebind.test:${allowed.port}/hook`, events: ['task.completed'] });
    await completedTask(gateway(), 'rebinding');
    const [delivery] = await waitFor('the delivery to fail', async () => {
      const listed = await deliveriesOf(gateway(), webhook.id);
      return listed[0]?.status === 'failed' ? listed : undefined;
    });
    assert.equal(delivery.attempts.length, 2);
    for (const attempt of delivery.attempts) {
      assert.equal(attempt.status_code, null);
      assert.match(attempt.error, /refused: hook\.rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    }
    assert.equal(loopbackHits, 0);
    assert.equal(allowed.receipts('/hook').length, 0);
  });
});
