import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

describe('Idempotency-Key on POST /api/v1/tasks', () => {
  const gateway = useGateway();
  const countTasks = async () => Number((await gateway().sql.query('select count(*) from tasks')).rows[0].count);

  it('replays the first answer with its headers and X-Idempotency-Cached', async () => {
    const headers = { 'idempotency-key': 'replay-1' };
    const first = await gateway().request('POST', '/api/v1/tasks', { query: 'once' }, headers);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-idempotency-cached'), null);
    const second = await gateway().request('POST', '/api/v1/tasks', { query: 'once' }, headers);
    assert.equal(second.status, 200);
    assert.equal(second.text, first.text);
    assert.equal(second.headers.get('x-idempotency-cached'), 'true');
    assert.equal(second.headers.get('x-idempotency-key'), 'replay-1');
    assert.equal(second.headers.get('x-workflow-id'), first.headers.get('x-workflow-id'));
    assert.equal(second.headers.get('x-session-id'), first.headers.get('x-session-id'));
    const { rows } = await gateway().sql.query('select count(*)::int as count from tasks where query = $1', ['once']);
    assert.equal(rows[0].count, 1);
  });

  it('a changed body under the same key is a new request', async () => {
    const headers = { 'idempotency-key': 'replay-2' };
    const first = await gateway().request('POST', '/api/v1/tasks', { query: 'body A' }, headers);
    const second = await gateway().request('POST', '/api/v1/tasks', { query: 'body B' }, headers);
    assert.notEqual(first.body.task_id, second.body.task_id);
    assert.equal(second.headers.get('x-idempotency-cached'), null);
  });

  it('does not cache a 400: the corrected retry runs', async () => {
    const headers = { 'idempotency-key': 'replay-3' };
    const bad = await gateway().request('POST', '/api/v1/tasks', { query: 'x', max_iterations: 99 }, headers);
    assert.equal(bad.status, 400);
    const again = await gateway().request('POST', '/api/v1/tasks', { query: 'x', max_iterations: 99 }, headers);
    assert.equal(again.status, 400);
    assert.equal(again.headers.get('x-idempotency-cached'), null);
  });

  it('10 concurrent submissions with one key create exactly one task', async () => {
    const before = await countTasks();
    const headers = { 'idempotency-key': 'concurrent-1' };
    const answers = await Promise.all(Array.from({ length: 10 }, () =>
      gateway().request('POST', '/api/v1/tasks', { query: 'concurrent' }, headers)));
    assert.ok(answers.every((answer) => answer.status === 200), answers.map((answer) => answer.text).join('\n'));
    assert.equal(new Set(answers.map((answer) => answer.body.task_id)).size, 1);
    assert.equal(answers.filter((answer) => answer.headers.get('x-idempotency-cached') === 'true').length, 9);
    assert.equal(await countTasks(), before + 1);
    await waitForTask(gateway(), answers[0].body.task_id);
  });
});
