import assert from 'node:assert/strict';
import { describe, before, it, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };
const QUESTION = 'Which renewable sources give electricity day and night?';

async function submitForReview(gateway: Gateway, headers: Record<string, string>, context: Record<string, unknown> = {}): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', {
    query: QUESTION, context: { force_research: true, research_strategy: 'quick', require_review: true, ...context },
  }, headers);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id;
}

/** The review once the plan is drafted (GET answers 404 until then). */
async function reviewOnceReady(gateway: Gateway, taskId: string, headers: Record<string, string>) {
  return waitFor('the plan to be drafted', async () => {
    const answer = await gateway.request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers);
    return answer.status === 200 ? answer : undefined;
  }, 60_000);
}

const post = (gateway: Gateway, taskId: string, body: unknown, headers: Record<string, string>, version?: number | string) =>
  gateway.request('POST', `/api/v1/tasks/${taskId}/review`, body, version === undefined ? headers : { ...headers, 'if-match': String(version) });

async function eventsOf(gateway: Gateway, taskId: string) {
  const { rows } = await gateway.sql.query('select type, agent_id, message, payload from task_events where task_id = $1 order by seq', [taskId]);
  return rows;
}

async function plannerCalls(gateway: Gateway, taskId: string): Promise<number> {
  const { rows } = await gateway.sql.query(`select count(*)::int as calls from usage_records where task_id = $1 and agent_id = 'research-planner'`, [taskId]);
  return rows[0].calls;
}

describe('the review of a research plan', () => {
  const gateway = useGateway({ env: { ...authEnv, WEB_SEARCH_PROVIDER: 'fixture', APPROVAL_SWEEP_INTERVAL_MS: '200', REVIEW_RETENTION_SECONDS: '3' } });
  let owner: Account;
  let colleague: Account;
  let stranger: Account;
  before(async () => {
    owner = await registerAccount(gateway(), 'owner');
    colleague = await addMember(gateway(), owner, 'colleague');
    stranger = await registerAccount(gateway(), 'stranger');
  });

  it('drafts a plan and waits, PAUSED; two feedback rounds with If-Match (a stale one is 409); approval runs the research with the confirmed plan', async () => {
    const headers = withKey(owner);
    const taskId = await submitForReview(gateway(), headers);
    const first = await reviewOnceReady(gateway(), taskId, headers);
    assert.equal(first.headers.get('etag'), '1');
    assert.equal(first.body.status, 'reviewing');
    assert.equal(first.body.round, 1);
    assert.equal(first.body.version, 1);
    assert.equal(first.body.query, QUESTION);
    assert.deepEqual(first.body.rounds.map((turn: any) => turn.role), ['assistant']);
    assert.equal(first.body.current_plan, first.body.rounds[0].message);
    assert.doesNotMatch(first.body.current_plan, /\[INTENT|RESEARCH_BRIEF/, 'the machine tags are not shown');

    const task = await gateway().request('GET', `/api/v1/tasks/${taskId}`, undefined, headers);
    assert.equal(task.body.status, 'TASK_STATUS_PAUSED');
    const control = await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`, undefined, headers);
    assert.equal(control.body.is_paused, true);
    assert.equal(control.body.pause_reason, 'plan_review');
    const resume = await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`, {}, headers);
    assert.equal(resume.status, 409);
    assert.match(resume.body.error, /waiting for the review of its research plan/);
    assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/pause`, {}, headers)).body.error, 'task is already paused');

    const second = await post(gateway(), taskId, { action: 'feedback', message: 'Also cover geothermal plants in Iceland.' }, headers, 1);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.headers.get('etag'), '2');
    assert.equal(second.body.status, 'reviewing');
    assert.equal(second.body.plan.round, 2);
    assert.equal(second.body.plan.version, 2);
    assert.equal(second.body.plan.intent, 'ready');
    assert.match(second.body.plan.message, /geothermal plants in Iceland/);
    // Beside the spec's plan, the review as a read gives it (Shannon's Python SDK reads its state from this answer).
    const { plan: _plan, ...stateAfter } = second.body;
    assert.deepEqual(stateAfter, (await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers)).body);
    assert.equal(stateAfter.round, 2);
    assert.equal(stateAfter.version, 2);
    assert.equal(stateAfter.current_plan, second.body.plan.message);
    assert.deepEqual(stateAfter.rounds.map((turn: { role: string }) => turn.role), ['assistant', 'user', 'assistant']);

    const stale = await post(gateway(), taskId, { action: 'feedback', message: 'And tidal power.' }, headers, 1);
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error, 'Conflict: state has been modified');
    const third = await post(gateway(), taskId, { action: 'feedback', message: 'And tidal power in France.' }, headers, '"2"');
    assert.equal(third.status, 200, third.text);
    assert.equal(third.headers.get('etag'), '3');

    const outdatedApproval = await post(gateway(), taskId, { action: 'approve' }, headers, 2);
    assert.equal(outdatedApproval.status, 409);
    assert.equal(outdatedApproval.body.error, 'Conflict: plan has been updated. Please review the latest version.');
    const approved = await post(gateway(), taskId, { action: 'approve' }, headers, 3);
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(approved.body, { status: 'approved', message: 'Research started' });
    assert.equal((await post(gateway(), taskId, { action: 'approve' }, headers)).status, 200, 'approving again answers the same');
    const late = await post(gateway(), taskId, { action: 'feedback', message: 'one more thing' }, headers);
    assert.equal(late.status, 409);

    const done = await waitForTask(gateway(), taskId, 120_000, headers);
    assert.equal(done.status, 'TASK_STATUS_COMPLETED', done.error);
    const events = await eventsOf(gateway(), taskId);
    const reviewEvents = events.filter((event) => /RESEARCH_PLAN|REVIEW_USER/.test(event.type));
    assert.deepEqual(reviewEvents.map((event) => event.type), [
      'RESEARCH_PLAN_READY', 'REVIEW_USER_FEEDBACK', 'RESEARCH_PLAN_UPDATED', 'REVIEW_USER_FEEDBACK', 'RESEARCH_PLAN_UPDATED', 'RESEARCH_PLAN_APPROVED',
    ]);
    assert.deepEqual(reviewEvents[2].payload, { round: 2, version: 2, intent: 'ready' });
    // The confirmed plan leads the refinement: its items, the owner's feedback among them, are what the agents research.
    const decomposed = events.find((event) => event.type === 'PROGRESS' && event.payload?.stage === 'decomposition');
    const assignments = decomposed.payload.subtasks.map((subtask: any) => subtask.description).join('\n');
    assert.match(assignments, /geothermal plants in Iceland/);
    assert.match(assignments, /tidal power in France/);
    assert.equal(await plannerCalls(gateway(), taskId), 3, 'the draft and two rounds are billed to the task');
    const after = await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers);
    assert.equal(after.body.status, 'approved');
    assert.equal(after.body.rounds.length, 5);
  });

  it('refuses bad requests with 400 and changes nothing', async () => {
    const headers = withKey(owner);
    const taskId = await submitForReview(gateway(), headers);
    await reviewOnceReady(gateway(), taskId, headers);
    const refusals: Array<[unknown, RegExp]> = [
      [{ action: 'feedback' }, /message is required/],
      [{ action: 'feedback', message: '   ' }, /message is required/],
      [{ action: 'feedback', message: 'é'.repeat(5121) }, /message is too long: at most 10240 bytes/],
      [{ action: 'reject' }, /action/],
      [{}, /action/],
      [{ action: 'feedback', message: 'x', tone: 'polite' }, /tone/],
      [{ action: 'approve', message: 'fine' }, /message goes with action feedback/],
      [{ action: 'feedback', message: 42 }, /message/],
    ];
    for (const [body, error] of refusals) {
      const answer = await post(gateway(), taskId, body, headers);
      assert.equal(answer.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${answer.text}`);
      assert.match(answer.body.error, error);
    }
    const malformed = await gateway().requestRaw('POST', `/api/v1/tasks/${taskId}/review`, '{"action": "feedback",', { ...headers, 'content-type': 'application/json' });
    assert.equal(malformed.status, 400);
    const badVersion = await post(gateway(), taskId, { action: 'feedback', message: 'x' }, headers, 'yesterday');
    assert.equal(badVersion.status, 400);
    assert.match(badVersion.body.error, /If-Match/);
    const review = await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers);
    assert.equal(review.body.version, 1, 'nothing changed');
    assert.equal(review.body.rounds.length, 1);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/00000000-0000-4000-8000-000000000000/review`, undefined, headers)).status, 404);
    await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, {}, headers);
  });

  it('one feedback at a time: of two at once one is 409; a failed planner is 502 and records nothing; after round 10 only approval', async () => {
    const headers = withKey(owner);
    const taskId = await submitForReview(gateway(), headers, { mock_delay_ms: 600, mock_review: { fail_rounds: [4] } });
    await reviewOnceReady(gateway(), taskId, headers);
    const pair = await Promise.all([1, 2].map((n) => post(gateway(), taskId, { action: 'feedback', message: `Point ${n} matters most.` }, headers)));
    assert.deepEqual(pair.map((answer) => answer.status).sort(), [200, 409]);
    assert.equal(pair.find((answer) => answer.status === 409)!.body.error, 'Another feedback request is in progress. Please wait.');
    const [feedback, approval] = await Promise.all([
      post(gateway(), taskId, { action: 'feedback', message: 'Point 3 matters too.' }, headers),
      sleep(200).then(() => post(gateway(), taskId, { action: 'approve' }, headers)),
    ]);
    assert.equal(feedback.status, 200, feedback.text);
    assert.equal(approval.status, 409, 'approval fails fast while a feedback round runs');
    assert.equal(approval.body.error, 'A feedback request is in progress. Please wait and try again.');

    const failed = await post(gateway(), taskId, { action: 'feedback', message: 'This round fails.' }, headers);
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error, 'Failed to generate updated plan');
    const unchanged = await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers);
    assert.equal(unchanged.body.version, 3);
    assert.equal(unchanged.body.rounds.length, 5, 'the failed round\'s feedback was not kept');
    assert.equal(await plannerCalls(gateway(), taskId), 3, 'the draft and the two rounds that succeeded');
    await gateway().sql.query(`update tasks set context = context - 'mock_review' || '{"mock_delay_ms": 0}' where id = $1`, [taskId]);

    for (let round = 4; round <= 10; round++) {
      const answer = await post(gateway(), taskId, { action: 'feedback', message: `Round ${round}: keep it short.` }, headers);
      assert.equal(answer.status, 200, `round ${round}: ${answer.text}`);
      assert.equal(answer.body.plan.round, round);
    }
    const eleventh = await post(gateway(), taskId, { action: 'feedback', message: 'Round 11.' }, headers);
    assert.equal(eleventh.status, 409);
    assert.equal(eleventh.body.error, 'Maximum review rounds reached. Please approve the plan.');
    assert.equal((await post(gateway(), taskId, { action: 'approve' }, headers, 10)).status, 200);
    await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, {}, headers);
  });

  it('only its owner reads or answers a review: a colleague gets 403, another tenant 404', async () => {
    const taskId = await submitForReview(gateway(), withKey(owner));
    await reviewOnceReady(gateway(), taskId, withKey(owner));
    for (const [account, status] of [[colleague, 403], [stranger, 404]] as const) {
      assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, withKey(account))).status, status);
      assert.equal((await post(gateway(), taskId, { action: 'feedback', message: 'mine now' }, withKey(account))).status, status);
      assert.equal((await post(gateway(), taskId, { action: 'approve' }, withKey(account))).status, status);
    }
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, withKey(owner))).body.version, 1);
    await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, {}, withKey(owner));
  });

  it('a plan that only asks questions cannot be approved (400) until the planner answers with a plan', async () => {
    const headers = withKey(owner);
    const taskId = await submitForReview(gateway(), headers, { mock_review: { intents: ['feedback'] } });
    const review = await reviewOnceReady(gateway(), taskId, headers);
    assert.equal(review.body.current_plan, '');
    const refused = await post(gateway(), taskId, { action: 'approve' }, headers);
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /No plan to approve/);
    const answered = await post(gateway(), taskId, { action: 'feedback', message: 'Baseload power over the last ten years.' }, headers);
    assert.equal(answered.body.plan.intent, 'ready');
    assert.equal((await post(gateway(), taskId, { action: 'approve' }, headers)).status, 200);
    await gateway().request('POST', `/api/v1/tasks/${taskId}/cancel`, {}, headers);
  });

  it('a plan nobody approves in time fails the task; the review reads timed_out until its retention ends, then 404', async () => {
    const headers = withKey(owner);
    const taskId = await submitForReview(gateway(), headers, { review_timeout: 2 });
    await reviewOnceReady(gateway(), taskId, headers);
    const failed = await waitForTask(gateway(), taskId, 30_000, headers);
    assert.equal(failed.status, 'TASK_STATUS_FAILED');
    assert.match(failed.error, /research plan review timed out/);
    const kept = await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers);
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.body.status, 'timed_out');
    assert.equal((await post(gateway(), taskId, { action: 'approve' }, headers)).status, 409);
    await waitFor('the review to be gone', async () => {
      const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/review`, undefined, headers);
      return answer.status === 404 ? answer : undefined;
    }, 15_000);
  });
});

test('a task waiting for review holds no worker and survives kill -9; approved after the restart, it completes', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture', WORKER_CONCURRENCY: '1' } });
  const taskId = await submitForReview(gateway, {});
  await reviewOnceReady(gateway, taskId, {});
  const other = await gateway.request('POST', '/api/v1/tasks', { query: 'what is 2+2?', mode: 'simple' });
  assert.equal((await waitForTask(gateway, other.body.task_id, 30_000)).status, 'TASK_STATUS_COMPLETED', 'the only worker is free');

  await gateway.kill('SIGKILL');
  await gateway.restart();
  const review = await reviewOnceReady(gateway, taskId, {});
  assert.equal(review.body.version, 1);
  assert.equal((await gateway.request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED');
  assert.equal((await post(gateway, taskId, { action: 'feedback', message: 'Also cover nuclear fission.' }, {}, 1)).status, 200);
  assert.equal((await post(gateway, taskId, { action: 'approve' }, {}, 2)).status, 200);
  const done = await waitForTask(gateway, taskId, 120_000);
  assert.equal(done.status, 'TASK_STATUS_COMPLETED', done.error);
  const { rows } = await gateway.sql.query(`select count(*)::int as n from task_events where task_id = $1 and type = 'RESEARCH_PLAN_READY'`, [taskId]);
  assert.equal(rows[0].n, 1, 'the plan was drafted once');
  assert.equal(await plannerCalls(gateway, taskId), 2);
});
