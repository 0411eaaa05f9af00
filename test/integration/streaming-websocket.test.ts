import assert from 'node:assert/strict';
import { describe, it, before } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';
import { readWebSocket } from '../helpers/websocket-client.ts';

describe('GET /api/v1/stream/ws', () => {
  const gateway = useGateway();
  let taskId: string;
  let rows: Array<{ seq: number; stream_id: string }>;

  before(async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'over websocket', context: { mock_answer_words: 30, mock_delay_ms: 200 } });
    taskId = submitted.body.task_id;
    await waitForTask(gateway(), taskId);
    rows = (await gateway().sql.query('select seq, stream_id from task_events where task_id = $1 order by seq', [taskId])).rows;
  });

  const wsUrl = (query: string) => `${gateway().url.replace('http', 'ws')}/api/v1/stream/ws?${query}`;

  it('sends every event as JSON with its type, STREAM_END last, then closes normally', async () => {
    const result = await readWebSocket(wsUrl(`workflow_id=${taskId}`));
    assert.deepEqual(result.events.map((event) => event.seq), rows.map((row) => row.seq));
    assert.ok(result.events.every((event) => typeof event.type === 'string'));
    assert.equal(result.events.at(-1).type, 'STREAM_END');
    assert.equal(result.closeCode, 1000);
  });

  it('follows a running task live', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'live ws', context: { mock_answer_words: 20, mock_delay_ms: 1000 } });
    const result = await readWebSocket(wsUrl(`workflow_id=${submitted.body.task_id}`));
    assert.deepEqual(result.events.map((event) => event.seq), result.events.map((_, index) => index + 1));
    assert.equal(result.events.at(-1).type, 'STREAM_END');
  });

  it('resumes after last_event_id in both forms and filters by types', async () => {
    const bySeq = await readWebSocket(wsUrl(`workflow_id=${taskId}&last_event_id=4`));
    assert.equal(bySeq.events[0].seq, 5);
    const byId = await readWebSocket(wsUrl(`workflow_id=${taskId}&last_event_id=${rows[2].stream_id}`));
    assert.equal(byId.events[0].seq, 4);
    const filtered = await readWebSocket(wsUrl(`workflow_id=${taskId}&types=LLM_OUTPUT`));
    assert.deepEqual(filtered.events.map((event) => event.type), ['LLM_OUTPUT', 'STREAM_END']);
  });

  it('refuses the upgrade with 404 for an unknown task and 400 without workflow_id', async () => {
    assert.equal((await readWebSocket(wsUrl('workflow_id=3f1b6a4e-1111-4222-8333-944455556666'))).status, 404);
    assert.equal((await readWebSocket(wsUrl('types=x'))).status, 400);
  });
});
