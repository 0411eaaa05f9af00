import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { start as startAnthropic } from '../fixtures/anthropic-stand-in.ts';
import { startGateway, waitForTask } from '../helpers/gateway.ts';
import { modelCatalogFile } from '../helpers/model-catalog-file.ts';

function writeCatalog(t: TestContext): string {
  const file = modelCatalogFile(t, [
    'default_tier: small',
    'providers:',
    '  claude: { kind: anthropic, api_key_env: ANTHROPIC_STAND_IN_KEY, base_url_env: ANTHROPIC_STAND_IN_URL }',
    '  mock: { kind: mock }',
    'models:',
    '  - { name: claude-test, provider: claude, model_id: claude-stand-in, tier: small, priority: 1, context_window: 200000, max_output_tokens: 4000, pricing: { input_per_million: 1, output_per_million: 5, cached_input_per_million: 0.1, cache_write_per_million: 1.25 } }',
  ]);
  return file;
}

const hasToolResult = (body: any) => body.messages.some((message: any) => Array.isArray(message.content) && message.content.some((block: any) => block.type === 'tool_result'));

test('an agent loop against Anthropic: its calls carry cache breakpoints, the second turn reads the first from the cache, and usage, breakdown, cost and /metrics show reads and writes at their prices', async (t) => {
  const provider = await startAnthropic({
    answer: 'Six times seven is 42.',
    reply: (body) => (body.tools !== undefined && !hasToolResult(body) ? { toolCalls: [{ name: 'calculator', input: { expression: '6*7' } }] } : undefined),
  });
  t.after(() => provider.close());
  const gateway = await startGateway(t, {
    env: { MODELS_CONFIG: writeCatalog(t), ANTHROPIC_STAND_IN_KEY: 'test-key', ANTHROPIC_STAND_IN_URL: `${provider.url}/v1`, DEFAULT_TASK_MODE: 'auto' },
  });
  const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'What is 6 times 7?', context: { role: 'generalist' } });
  assert.equal(submitted.status, 200, submitted.text);
  const task = await waitForTask(gateway, submitted.body.task_id);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.match(task.result, /42/);

  const turns = provider.requests.filter((request) => request.body.tools !== undefined);
  assert.equal(turns.length, 2, 'the agent asked for the calculator, then answered');
  for (const turn of turns) {
    assert.deepEqual(turn.body.tools.at(-1).cache_control, { type: 'ephemeral' }, 'the last tool is a breakpoint');
    assert.equal(turn.body.tools.filter((tool: any) => tool.cache_control !== undefined).length, 1);
    assert.deepEqual(turn.body.system.at(-1).cache_control, { type: 'ephemeral' }, 'the system prompt is a breakpoint');
    assert.deepEqual(turn.body.messages.at(-1).content.at(-1).cache_control, { type: 'ephemeral' }, 'the last message is a breakpoint');
  }

  const { rows } = await gateway.sql.query(
    `select input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_usd::float8 as cost from usage_records
     where task_id = $1 and cached_input_tokens + cache_write_tokens > 0 order by created_at`, [task.task_id]);
  assert.equal(rows.length, 2, JSON.stringify(rows));
  const [first, second] = rows;
  assert.equal(first.cached_input_tokens, 0);
  assert.equal(first.cache_write_tokens, first.input_tokens, 'the first turn wrote its whole prompt');
  assert.equal(second.cached_input_tokens, first.input_tokens, 'the second turn read all of it');
  assert.ok(second.cache_write_tokens > 0 && second.cache_write_tokens < second.input_tokens, 'and wrote only the new turn');
  for (const row of rows) {
    const uncached = row.input_tokens - row.cached_input_tokens - row.cache_write_tokens;
    const expected = (uncached * 1 + row.cached_input_tokens * 0.1 + row.cache_write_tokens * 1.25 + row.output_tokens * 5) / 1e6;
    assert.ok(Math.abs(row.cost - expected) < 1e-12, `cost ${row.cost}, expected ${expected}`);
  }
  const reads = first.cached_input_tokens + second.cached_input_tokens;
  const writes = first.cache_write_tokens + second.cache_write_tokens;
  assert.equal(task.usage.cached_input_tokens, reads);
  assert.equal(task.usage.cache_write_tokens, writes);
  const breakdown = task.metadata.model_breakdown.find((entry: any) => entry.model === 'claude-test');
  assert.deepEqual([breakdown.cached_input_tokens, breakdown.cache_write_tokens], [reads, writes]);
  const metrics = (await gateway.request('GET', '/metrics')).body as string;
  assert.match(metrics, new RegExp(`agentgate_model_tokens_total\\{[^}]*model="claude-test"[^}]*type="cache_write"[^}]*\\} ${writes}\\b`));
  assert.match(metrics, new RegExp(`agentgate_model_tokens_total\\{[^}]*model="claude-test"[^}]*type="cached_input"[^}]*\\} ${reads}\\b`));
});
