import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

test('retention purges token deltas after a day and other events after the retention period', async (t) => {
  const gateway = await startGateway(t);
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'old news', context: { mock_delay_ms: 200 } });
  const taskId = submitted.body.task_id;
  await waitForTask(gateway, taskId);
  // Age the log: partials 25 hours old, the first event 91 days old, the rest fresh.
  await gateway.sql.query(`update task_events set created_at = now() - interval '25 hours' where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId]);
  await gateway.sql.query(`update task_events set created_at = now() - interval '91 days' where task_id = $1 and seq = 1`, [taskId]);
  const before = (await gateway.sql.query('select count(*)::int as count from task_events where task_id = $1', [taskId])).rows[0].count;
  const partials = (await gateway.sql.query(`select count(*)::int as count from task_events where task_id = $1 and type = 'LLM_PARTIAL'`, [taskId])).rows[0].count;
  assert.ok(partials > 0);

  await gateway.restart(); // the purge runs at start-up (and hourly)
  const rows = await waitFor('the purge', async () => {
    const { rows: remaining } = await gateway.sql.query('select seq, type from task_events where task_id = $1 order by seq', [taskId]);
    return remaining.length === before - partials - 1 ? remaining : undefined;
  });
  assert.ok(rows.every((row) => row.type !== 'LLM_PARTIAL' && row.seq !== 1));
  const history = await gateway.request('GET', `/api/v1/tasks/${taskId}/events`);
  assert.equal(history.body.events.at(-1).type, 'STREAM_END');
});
