import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { start as startStandIn, type StandIn } from '../fixtures/openai-stand-in.ts';
import { useGateway, waitForTask } from '../helpers/gateway.ts';
import { readWebSocket } from '../helpers/websocket-client.ts';
import { readSse } from '../helpers/sse-client.ts';

async function startedEvent(gateway: { sql: { query: Function } }, taskId: string) {
  const { rows } = await gateway.sql.query(`select payload from task_events where task_id = $1 and type = 'WORKFLOW_STARTED'`, [taskId]);
  assert.equal(rows.length, 1);
  return rows[0].payload;
}

describe('stream filters and WORKFLOW_STARTED', () => {
  const gateway = useGateway();
  let taskId: string;

  before(async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'filter me', context: { mock_answer_words: 20 } });
    taskId = submitted.body.task_id;
    await waitForTask(gateway(), taskId);
  });

  const sseUrl = (query: string) => `${gateway().url}/api/v1/stream/sse?workflow_id=${taskId}&${query}`;
  const wsUrl = (query: string) => `${gateway().url.replace('http', 'ws')}/api/v1/stream/ws?workflow_id=${taskId}&${query}`;

  it('types accepts the SSE event names as aliases of the event types', async () => {
    const aliased = await readSse(sseUrl('types=thread.message.completed,WORKFLOW_COMPLETED'));
    assert.equal(aliased.status, 200);
    assert.deepEqual(aliased.messages.map((message) => message.event), ['thread.message.completed', 'WORKFLOW_COMPLETED', 'done']);
    const deltas = await readSse(sseUrl('types=thread.message.delta'));
    const names = new Set(deltas.messages.map((message) => message.event));
    assert.deepEqual([...names], ['thread.message.delta', 'done']);
    const mixed = await readSse(sseUrl('types=LLM_OUTPUT, done ,workflow.paused'));
    assert.deepEqual(mixed.messages.map((message) => message.event), ['thread.message.completed', 'done']);
  });

  it('types with unknown names answers 400 naming each of them', async () => {
    const answer = await readSse(sseUrl('types=LLM_OUTPUT,NOT_A_TYPE,thread.message.nope'));
    assert.equal(answer.status, 400);
    assert.match((answer.body as any).error, /^unknown event types: NOT_A_TYPE, thread\.message\.nope \(/, 'the known LLM_OUTPUT is not listed');
    const lowercase = await readSse(sseUrl('types=llm_output'));
    assert.equal(lowercase.status, 400);
  });

  it('the WebSocket route applies the same rules', async () => {
    const refused = await readWebSocket(wsUrl('types=WORKFLOW_STARTED,BOGUS'));
    assert.equal(refused.status, 400);
    assert.match((refused as any).error, /BOGUS/);
    const aliased = await readWebSocket(wsUrl('types=thread.message.completed'));
    assert.deepEqual(aliased.events.map((event) => event.type), ['LLM_OUTPUT', 'STREAM_END']);
  });

  it('WORKFLOW_STARTED carries the client context keys only, capped at 8 KiB', async () => {
    const small = await gateway().request('POST', '/api/v1/tasks', {
      query: 'context please', session_id: 'my-custom-session', context: { team: 'blue', prompt_params: { a: 1 }, system_prompt: 'Be brief.' },
    });
    assert.equal(small.status, 200, small.text);
    await waitForTask(gateway(), small.body.task_id);
    const smallPayload = await startedEvent(gateway(), small.body.task_id);
    assert.deepEqual(smallPayload.task_context, { team: 'blue', prompt_params: { a: 1 }, system_prompt: 'Be brief.' }, 'external_id is the server\'s key');
    assert.equal(smallPayload.task_context_omitted, undefined);

    const big = await gateway().request('POST', '/api/v1/tasks', {
      query: 'big context', context: { team: 'red', notes: 'n'.repeat(20_000), more: 'm'.repeat(5_000), tiny: 1 },
    });
    assert.equal(big.status, 200, big.text);
    await waitForTask(gateway(), big.body.task_id);
    const bigPayload = await startedEvent(gateway(), big.body.task_id);
    assert.deepEqual(bigPayload.task_context, { team: 'red', more: 'm'.repeat(5_000), tiny: 1 }, 'the largest values go first until it fits');
    assert.deepEqual(bigPayload.task_context_omitted, ['notes']);
    assert.ok(JSON.stringify(bigPayload.task_context).length <= 8192);
  });

  it('an OpenAI request does not echo its conversation in WORKFLOW_STARTED', async () => {
    const long = 'x'.repeat(3_000);
    const messages = [
      { role: 'system', content: 'Be kind.' },
      ...Array.from({ length: 6 }, (_, index) => [{ role: 'user', content: `${long} question ${index}` }, { role: 'assistant', content: `${long} answer ${index}` }]).flat(),
      { role: 'user', content: 'the actual question' },
    ];
    const answer = await gateway().request('POST', '/v1/chat/completions', { model: 'service-chat', messages });
    assert.equal(answer.status, 200, answer.text);
    const { rows } = await gateway().sql.query(`select id from tasks where query = 'the actual question'`);
    const payload = await startedEvent(gateway(), rows[0].id);
    assert.ok(!('conversation_history' in payload.task_context), 'no conversation_history');
    assert.ok(!JSON.stringify(payload).includes(long), 'no message of the conversation');
    assert.equal(payload.task_context.system_prompt, 'Be kind.');
  });
});

describe('model fallback between providers', () => {
  let failing: StandIn;
  let working: StandIn;
  before(async () => {
    failing = await startStandIn({ failWithStatus: 500 });
    working = await startStandIn({ answer: 'Answer from the second provider.' });
  });
  after(async () => { await failing.close(); await working.close(); });
  const gateway = useGateway({
    env: { get OPENAI_COMPATIBLE_BASE_URL() { return `${failing.url}/v1`; }, get OLLAMA_BASE_URL() { return `${working.url}/v1`; } } as Record<string, string>,
  });

  it('emits one ERROR_RECOVERY naming the failed model and the one tried next, keyed against replays', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'fall back please', model_tier: 'small' });
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.provider, 'ollama', task.error);
    const { rows } = await gateway().sql.query(
      `select type, agent_id, message, payload, dedupe_key from task_events where task_id = $1 order by seq`, [submitted.body.task_id]);
    const recoveries = rows.filter((row) => row.type === 'ERROR_RECOVERY');
    assert.equal(recoveries.length, 1);
    const [recovery] = recoveries;
    assert.match(recovery.message, /openai_compatible\/local-small failed.*trying ollama\/ollama-small/);
    assert.equal(recovery.agent_id, 'simple-agent');
    assert.deepEqual(
      [recovery.payload.failed_provider, recovery.payload.failed_model, recovery.payload.next_provider, recovery.payload.next_model],
      ['openai_compatible', 'local-small', 'ollama', 'ollama-small'],
    );
    assert.match(recovery.payload.error, /stand-in failure/);
    assert.ok(recovery.dedupe_key, 'a replayed step records it once');
    const types = rows.map((row) => row.type);
    assert.ok(types.indexOf('AGENT_STARTED') < types.indexOf('ERROR_RECOVERY'));
    assert.ok(types.indexOf('ERROR_RECOVERY') < types.indexOf('AGENT_COMPLETED'));

    const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}&types=ERROR_RECOVERY`);
    assert.deepEqual(stream.messages.map((message) => message.event), ['ERROR_RECOVERY', 'done']);
  });
});
