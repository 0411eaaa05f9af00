import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitFor } from '../helpers/gateway.ts';
import { readSse } from '../helpers/sse-client.ts';

describe('stream limits', () => {
  const gateway = useGateway({
    env: { MAX_STREAMS_PER_KEY: '2', STREAM_INACTIVITY_TIMEOUT_SECONDS: '1', SSE_PING_INTERVAL_MS: '200' },
  });

  it('closes a stream after the inactivity timeout while still sending pings', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow', context: { mock_delay_ms: 60_000 } });
    const started = Date.now();
    const stream = await readSse(`${gateway().url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}`, { timeoutMs: 10_000 });
    assert.ok(stream.closedByServer);
    assert.ok(Date.now() - started < 8_000);
    assert.ok(stream.comments.includes('ping'), 'pings are sent');
    assert.ok(stream.comments.includes('closing after inactivity'));
  });

  it('refuses a stream beyond the per-key limit with 429', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'slow too', context: { mock_delay_ms: 60_000, mock_answer_words: 200 } });
    const url = `${gateway().url}/api/v1/stream/sse?workflow_id=${submitted.body.task_id}`;
    const controllers = [new AbortController(), new AbortController()];
    const open = controllers.map((controller) => fetch(url, { signal: controller.signal }));
    const responses = await Promise.all(open);
    assert.deepEqual(responses.map((response) => response.status), [200, 200]);
    const third = await fetch(url);
    assert.equal(third.status, 429);
    assert.match((await third.json()).error, /concurrent streams/);
    for (const controller of controllers) controller.abort();
    await waitFor('slots to be released', async () => {
      const retry = await fetch(url, { signal: AbortSignal.timeout(500) }).catch(() => undefined);
      return retry?.status === 200 ? true : undefined;
    }, 5_000);
  });

});
