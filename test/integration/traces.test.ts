import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';
import { useOtlpCollector } from '../helpers/otlp-collector.ts';

describe('explore', () => {
  const env: Record<string, string> = { DEFAULT_TASK_MODE: 'auto' };
  const collector = useOtlpCollector(env);
  const gateway = useGateway({ env });
  it('dumps', async () => {
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const submitted = await gateway().request('POST', '/api/v1/tasks', {
      query: 'What is 2+2?', context: { role: 'generalist', mock_tool_calls: [{ tool: 'calculator', args: { expression: '2+2' } }] },
    }, { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=abc' });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    await waitFor('task run', async () => collector().spans().find((span) => span.name === 'task run') ?? undefined);
    for (const span of collector().spans()) console.log(span.traceId === traceId, span.spanId, span.parentSpanId, span.name, JSON.stringify(span.attributes), JSON.stringify(span.status), JSON.stringify(span.events));
    console.log(JSON.stringify(collector().spans()[0].resource));
    console.log(gateway().output().slice(0, 3000));
    const { rows } = await gateway().sql.query('select options from tasks where id = $1', [submitted.body.task_id]);
    console.log(JSON.stringify(rows[0]));
  });
});
