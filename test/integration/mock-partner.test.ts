import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

/** The mock as a planning and tool-using partner through the native API, unscripted (issue 31, scope 6). */
describe('the mock plans and picks tools from what a request says', () => {
  const gateway = useGateway({ env: { DEFAULT_TASK_MODE: 'auto' } });

  const run = async (body: Record<string, unknown>) => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', body);
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows } = await gateway().sql.query('select type, agent_id, payload from task_events where task_id = $1 order by seq', [task.task_id]);
    return { task, events: rows as { type: string; agent_id: string | null; payload: any }[] };
  };

  it('"Compare the climate of Lisbon and Oslo, then recommend when to visit each" is three subtasks, the third after the first two', async () => {
    const { task, events } = await run({ query: 'Compare the climate of Lisbon and Oslo, then recommend when to visit each' });
    assert.equal(task.mode, 'standard');
    const planned = events.find((event) => event.type === 'PROGRESS' && event.payload?.stage === 'planned');
    assert.deepEqual(planned?.payload.plan.map((step: any) => step.name),
      ['Research the climate of Lisbon', 'Research the climate of Oslo', 'Recommend when to visit each']);
    assert.deepEqual(planned?.payload.deps, [{ from: 'task-1', to: 'task-3' }, { from: 'task-2', to: 'task-3' }]);
    assert.match(task.result, /Synthesis of 3 results/);
  });

  it('a one-step request stays a simple task', async () => {
    const { task } = await run({ query: 'Write a haiku about autumn' });
    assert.equal(task.mode, 'simple');
  });

  for (const [query, tool, argument] of [
    ['What is 17 * 23?', 'calculator', { expression: '17 * 23' }],
    ['Summarise http://127.0.0.1:9/report.html please', 'web_fetch', { url: 'http://127.0.0.1:9/report.html' }],
    ['Who invented the telephone?', 'web_search', { query: 'invented the telephone' }],
  ] as const) {
    it(`an agent with tools calls ${tool} for "${query}" without being told to`, async () => {
      const { task, events } = await run({ query, context: { role: 'generalist' } });
      const invoked = events.filter((event) => event.type === 'TOOL_INVOKED');
      assert.equal(invoked.length, 1, JSON.stringify(invoked));
      assert.equal(invoked[0].payload.tool, tool);
      for (const [name, value] of Object.entries(argument)) assert.equal(invoked[0].payload.args[name], value);
      assert.ok(events.some((event) => event.type === 'TOOL_OBSERVATION'), 'the tool ran and its result went back to the model');
      assert.match(task.result, new RegExp(`Tool results: ${tool}: `));
    });
  }
});
