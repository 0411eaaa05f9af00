import assert from 'node:assert/strict';
import { honouringRetryAfter, waitFor, waitForTask, type Gateway } from './gateway.ts';
import { readSse, type SseResult } from './sse-client.ts';

/** Submits tasks whose mock answers stream slowly and opens an SSE stream on each; resolves once all are open. */
export async function submitStreamingTasks(gateway: Gateway, count: number, delayMs: number) {
  const taskIds: string[] = [];
  for (let index = 0; index < count; index++) {
    const answer = await gateway.request('POST', '/api/v1/tasks', { query: `outage task ${index}`, context: { mock_delay_ms: delayMs } });
    assert.equal(answer.status, 200, answer.text);
    taskIds.push(answer.body.task_id);
  }
  const opened: Array<Promise<void>> = [];
  const streams = taskIds.map((taskId) => {
    let onOpen = () => {};
    opened.push(new Promise<void>((resolve) => { onOpen = resolve; }));
    return openStream(`${gateway.url}/api/v1/stream/sse?workflow_id=${taskId}`, onOpen);
  });
  await Promise.race([Promise.all(opened), Promise.all(streams)]);
  return { taskIds, streams };
}

/**
 * Opens a stream as an EventSource would: a 503 (on a loaded machine, 30 streams and their tasks can wait longer
 * for a database connection than DB_CONNECT_TIMEOUT_MS) is tried again after its Retry-After.
 */
function openStream(url: string, onOpen: () => void): Promise<SseResult> {
  return honouringRetryAfter(() => readSse(url, { timeoutMs: 120_000, onOpen }));
}

export async function waitUntilStreaming(gateway: Gateway, taskIds: string[], minimum: number): Promise<void> {
  await waitFor('answers to be streaming', async () => {
    const { rows } = await gateway.sql.query(`select count(distinct task_id)::int as count from task_events where type = 'LLM_PARTIAL' and task_id = any($1)`, [taskIds]);
    return rows[0].count >= minimum ? true : undefined;
  });
}

/** Every task completed exactly once, with gap-free events, and every stream carried the whole answer. */
export async function assertCompletedOnce(gateway: Gateway, taskIds: string[], streams: Array<Promise<SseResult>>): Promise<void> {
  const results = new Map<string, string>();
  for (const taskId of taskIds) {
    const task = await waitForTask(gateway, taskId, 90_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', `${taskId}: ${task.error}`);
    results.set(taskId, task.result);
  }
  const { rows } = await gateway.sql.query(`
    select t.id, array_agg(e.seq order by e.seq) as seqs,
      (select count(*)::int from usage_records u where u.task_id = t.id and u.agent_id = 'simple-agent') as usage_rows,
      count(*) filter (where e.type = 'LLM_OUTPUT' and e.agent_id = 'final_output')::int as final_outputs,
      count(*) filter (where e.type = 'WORKFLOW_COMPLETED')::int as completions,
      count(*) filter (where e.type = 'STREAM_END')::int as stream_ends
    from tasks t join task_events e on e.task_id = t.id where t.id = any($1) group by t.id`, [taskIds]);
  assert.equal(rows.length, taskIds.length);
  for (const row of rows) {
    assert.deepEqual([row.usage_rows, row.final_outputs, row.completions, row.stream_ends], [1, 1, 1, 1], `task ${row.id}`);
    assert.deepEqual(row.seqs, row.seqs.map((_: number, index: number) => index + 1), `gap-free seq for ${row.id}`);
  }
  const streamed = await Promise.all(streams);
  streamed.forEach((stream, index) => {
    const frames = stream.messages;
    assert.equal(frames.at(-1)?.event, 'done', `stream ${taskIds[index]} (answered ${stream.status}) ended with done`);
    const seqs = frames.filter((frame) => frame.data !== '[DONE]').map((frame) => JSON.parse(frame.data).seq as number);
    assert.deepEqual(seqs, seqs.map((_, position) => position + 1), `stream ${taskIds[index]} lost or repeated nothing`);
    const text = frames.filter((frame) => frame.event === 'thread.message.delta').map((frame) => JSON.parse(frame.data).delta).join('');
    assert.equal(text, results.get(taskIds[index]), `stream ${taskIds[index]} carried the whole answer`);
  });
}

