import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

describe('GET /api/v1/tasks/{id}/events and /timeline', () => {
  const gateway = useGateway();
  let taskId: string;
  let all: Array<{ seq: number; type: string }>;

  before(async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'history', context: { mock_answer_words: 30, mock_delay_ms: 400 } });
    taskId = submitted.body.task_id;
    await waitForTask(gateway(), taskId);
    all = (await gateway().sql.query('select seq, type from task_events where task_id = $1 order by seq', [taskId])).rows;
  });

  it('pages the history without LLM_PARTIAL by default', async () => {
    const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/events?limit=3`);
    assert.equal(answer.status, 200);
    const withoutPartials = all.filter((event) => event.type !== 'LLM_PARTIAL');
    assert.deepEqual(answer.body.events.map((event: any) => event.seq), withoutPartials.slice(0, 3).map((event) => event.seq));
    assert.equal(answer.body.count, 3);
    assert.equal(answer.body.total_count, withoutPartials.length);
    assert.equal(answer.body.has_more, true);
    const event = answer.body.events[0];
    for (const field of ['workflow_id', 'type', 'agent_id', 'message', 'timestamp', 'seq', 'stream_id']) assert.ok(field in event, field);
    const second = await gateway().request('GET', `/api/v1/tasks/${taskId}/events?limit=3&offset=3`);
    assert.deepEqual(second.body.events.map((item: any) => item.seq), withoutPartials.slice(3, 6).map((item) => item.seq));
  });

  it('includes partials on request and follows an after_seq cursor', async () => {
    const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/events?include_partial=true&limit=200`);
    assert.equal(answer.body.total_count, all.length);
    assert.ok(answer.body.events.some((event: any) => event.type === 'LLM_PARTIAL'));
    const cursor = await gateway().request('GET', `/api/v1/tasks/${taskId}/events?include_partial=true&after_seq=4&limit=2`);
    assert.deepEqual(cursor.body.events.map((event: any) => event.seq), [5, 6]);
    assert.equal(cursor.body.next_after_seq, 6);
  });

  for (const query of ['limit=0', 'limit=201', 'offset=-1', 'after_seq=x', 'include_partial=maybe']) {
    it(`answers 400 for ${query}`, async () => {
      const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/events?${query}`);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(typeof answer.body.error, 'string');
    });
  }

  it('answers 404 for the events and timeline of an unknown task', async () => {
    for (const path of ['events', 'timeline']) {
      const answer = await gateway().request('GET', `/api/v1/tasks/3f1b6a4e-1111-4222-8333-944455556666/${path}`);
      assert.equal(answer.status, 404);
    }
  });

  it('builds the same timeline on every call from the durable step records', async () => {
    // The workflow has settled a moment after the task's status: wait for the engine's record of its end.
    const first = await waitFor('the workflow to end', async () => {
      const answer = await gateway().request('GET', `/api/v1/tasks/${taskId}/timeline`);
      return answer.body.engine_status === 'SUCCESS' ? answer : undefined;
    });
    assert.equal(first.status, 200);
    // A simple task is one durable step: start, model call and completion (issue 13).
    assert.deepEqual(first.body.steps.map((step: any) => step.name), ['answer']);
    assert.deepEqual(first.body.phases.map((phase: any) => phase.name), ['execution']);
    for (const step of first.body.steps) {
      assert.equal(step.status, 'completed');
      assert.ok(step.duration_ms >= 0);
      assert.equal(step.retries, 0);
    }
    assert.ok(first.body.steps.find((step: any) => step.name === 'answer').duration_ms >= 300, 'the step took the mock delay');
    assert.equal(first.body.status, 'TASK_STATUS_COMPLETED');
    assert.equal(first.body.recovery_attempts, 0, 'a task that never crashed was never recovered');
    const second = await gateway().request('GET', `/api/v1/tasks/${taskId}/timeline`);
    assert.deepEqual(second.body, first.body);
  });
});
