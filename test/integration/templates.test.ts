import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it, test } from 'node:test';
import { promisify } from 'node:util';
import { useGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';

type Event = { seq: number; type: string; agent_id: string | null; message: string; payload: any };

const eventsOf = async (gateway: Gateway, taskId: string): Promise<Event[]> =>
  (await gateway.sql.query('select seq, type, agent_id, message, payload from task_events where task_id = $1 order by seq', [taskId])).rows;

const usageRowsOf = async (gateway: Gateway, taskId: string) =>
  (await gateway.sql.query('select agent_id, model, provider from usage_records where task_id = $1', [taskId])).rows;

const countTasks = async (gateway: Gateway) => Number((await gateway.sql.query('select count(*) from tasks')).rows[0].count);

const firstSeq = (events: Event[], type: string, agentId: string) => events.find((event) => event.type === type && event.agent_id === agentId)?.seq ?? Infinity;

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A templates directory holding the shipped templates (when asked) and the given files, each a list of YAML lines. */
function templatesDirectory(files: Record<string, string[]>, options: { withShipped?: boolean } = {}): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'agentgate-templates-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  if (options.withShipped) cpSync(path.join(ROOT, 'config/templates'), directory, { recursive: true });
  for (const [name, lines] of Object.entries(files)) writeFileSync(path.join(directory, name), lines.join('\n'));
  return directory;
}

async function submit(gateway: Gateway, body: Record<string, unknown>): Promise<string> {
  const answer = await gateway.request('POST', '/api/v1/tasks', body);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id;
}

describe('workflow templates (config/templates)', () => {
  // The helper's default mode is `simple`: a template must run its nodes all the same.
  const gateway = useGateway();

  it('a disable_ai template runs its text and tool nodes with no model call and no usage, latest version by default', async () => {
    const taskId = await submit(gateway(), { query: 'Quarterly figures', context: { template: 'fixed-report', disable_ai: true } });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.result, 'Report: Quarterly figures\nTotal: 399\nAverage: 20\n');
    assert.equal(task.mode, 'template');
    assert.equal(task.model_used, 'none');
    assert.equal(task.provider, 'template');
    assert.deepEqual(task.usage, { total_tokens: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 });
    assert.deepEqual(await usageRowsOf(gateway(), taskId), []);

    const events = await eventsOf(gateway(), taskId);
    const progress = events.find((event) => event.type === 'PROGRESS' && event.payload?.template);
    assert.deepEqual({ ...progress?.payload, nodes: progress?.payload.nodes.map((node: any) => node.id) },
      { template: 'fixed-report', version: '1.1.0', nodes: ['heading', 'total', 'average', 'report'] });
    for (const node of ['heading', 'total', 'average', 'report']) {
      assert.ok(firstSeq(events, 'AGENT_STARTED', node) < firstSeq(events, 'AGENT_COMPLETED', node), `${node} started, then completed`);
    }
    assert.ok(firstSeq(events, 'AGENT_STARTED', 'report') > Math.max(firstSeq(events, 'AGENT_COMPLETED', 'total'), firstSeq(events, 'AGENT_COMPLETED', 'average')),
      'the report node starts after the nodes it depends on');
    const invoked = events.find((event) => event.type === 'TOOL_INVOKED' && event.agent_id === 'total');
    assert.deepEqual(invoked?.payload, { tool: 'calculator', call_id: 'total', args: { expression: '19 * 21' } });
    const observed = events.find((event) => event.type === 'TOOL_OBSERVATION' && event.agent_id === 'total');
    assert.deepEqual(observed?.payload, { tool: 'calculator', call_id: 'total', output: 399 });
    assert.ok(invoked!.seq < observed!.seq);
    assert.equal(events.filter((event) => event.type === 'LLM_PARTIAL' || event.type === 'LLM_PROMPT').length, 0, 'no model was called');
    const output = events.filter((event) => event.type === 'LLM_OUTPUT');
    assert.deepEqual(output.map((event) => [event.agent_id, event.message, event.payload.model_used, event.payload.provider]),
      [['final_output', task.result, 'none', 'template']]);
    assert.deepEqual(events.slice(-2).map((event) => event.type), ['WORKFLOW_COMPLETED', 'STREAM_END']);
  });

  it('template_version picks the older version, and template_name is an alias of template', async () => {
    const taskId = await submit(gateway(), { query: 'Old figures', context: { template_name: 'fixed-report', template_version: '1.0.0', disable_ai: true } });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.result, 'Report: Old figures\nTotal: 399\n');
    const progress = (await eventsOf(gateway(), taskId)).find((event) => event.type === 'PROGRESS' && event.payload?.template);
    assert.equal(progress?.payload.version, '1.0.0');
  });

  it('a template with a model node completes with that node\'s answer and its usage row', async () => {
    const taskId = await submit(gateway(), { query: 'Tide pools', context: { template: 'research-brief' } });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.mode, 'template');
    assert.equal(task.provider, 'mock');
    assert.match(task.result, /Mock answer/);
    assert.ok(task.usage.total_tokens > 0);
    const usage = await usageRowsOf(gateway(), taskId);
    assert.deepEqual(usage.map((row) => row.agent_id), ['brief']);
    const events = await eventsOf(gateway(), taskId);
    const prompt = events.find((event) => event.type === 'LLM_PROMPT' && event.agent_id === 'brief');
    assert.match(prompt?.message ?? '', /Topic: Tide pools/, 'the outline node\'s text filled the prompt');
    assert.ok(firstSeq(events, 'AGENT_COMPLETED', 'outline') < firstSeq(events, 'AGENT_STARTED', 'brief'));
  });

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['a template that does not exist', { template: 'weekly-report' }, 'template weekly-report not found'],
    ['a version that does not exist', { template_name: 'fixed-report', template_version: '9.0.0' }, 'template fixed-report version 9.0.0 not found'],
    ['template_version without a template', { template_version: '1.0.0' }, 'template_version needs a template: name one with context.template'],
    // Issue 25: read as numbers, these all matched 1.0.0.
    ...['1e0', '0x1', '1.0', '1', ' 1.0.0', 'v1.0.0', '01.0.0', '1.0.0.0', '1.0.0+build'].map((version): [string, Record<string, unknown>, string] => [
      `template_version ${JSON.stringify(version)}, not a semantic version`, { template_name: 'fixed-report', template_version: version },
      `invalid context.template_version: ${JSON.stringify(version)} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0)`,
    ]),
    ['disable_ai without a template', { disable_ai: true }, 'disable_ai runs a template without a model: name one with context.template'],
    ['disable_ai with a template that calls a model', { template: 'research-brief', disable_ai: true },
      'disable_ai: template research-brief 1.0.0 calls a model (node brief); choose a template without model nodes'],
  ];
  for (const [name, context, error] of refused) {
    it(`refuses ${name} with 400 and creates no task`, async () => {
      const before = await countTasks(gateway());
      const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'refused', context });
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(answer.body, { error });
      assert.equal(await countTasks(gateway()), before);
    });
  }
});

describe('workflow templates with parameters and failing nodes', () => {
  const directory = templatesDirectory({
    'priced.yaml': [
      'name: priced', 'version: "1.0.0"', 'description: a price from parameters', 'nodes:',
      '  - id: price', '    kind: tool', '    tool: calculator', '    args: { expression: "${params.units} * ${params.unit_price}" }',
      '  - id: line', '    kind: text', '    depends_on: [price]', '    text: "${params.units} units for ${query}: ${price}"',
    ],
    'broken.yaml': [
      'name: broken', 'version: "1.0.0"', 'description: a tool node that fails', 'nodes:',
      '  - id: intro', '    kind: text', '    text: "never shown"',
      '  - id: compute', '    kind: tool', '    tool: calculator', '    args: { expression: "import(1)" }',
      '  - id: after', '    kind: text', '    depends_on: [compute, intro]', '    text: "${compute}"',
    ],
  }, { withShipped: true });
  const gateway = useGateway({ env: { TEMPLATES_DIR: directory } });

  it('fills ${params.*} from context.prompt_params in tool arguments and texts', async () => {
    const taskId = await submit(gateway(), { query: 'widgets', context: { template: 'priced', disable_ai: true, prompt_params: { units: 4, unit_price: 2.5 } } });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.result, '4 units for widgets: 10');
  });

  it('a failing node fails the task, naming the template and the node; its dependents do not run', async () => {
    const taskId = await submit(gateway(), { query: 'break', context: { template: 'broken', disable_ai: true } });
    const task = await waitForTask(gateway(), taskId);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /^template broken node compute failed: calculator: function not allowed: import$/);
    const events = await eventsOf(gateway(), taskId);
    const observed = events.find((event) => event.type === 'TOOL_OBSERVATION' && event.agent_id === 'compute');
    assert.equal(typeof observed?.payload.error, 'string');
    assert.ok(events.some((event) => event.type === 'ERROR_OCCURRED' && event.agent_id === 'compute'));
    assert.equal(firstSeq(events, 'AGENT_STARTED', 'after'), Infinity, 'the dependent node was skipped');
    assert.deepEqual(events.slice(-1).map((event) => event.type), ['STREAM_END']);
  });
});

test('an invalid template file stops start-up with a message naming the file and the problem', async () => {
  const directory = templatesDirectory({
    'loop.yaml': [
      'name: loop', 'version: "1.0.0"', 'description: a cycle', 'nodes:',
      '  - id: a', '    kind: text', '    text: A', '    depends_on: [b]',
      '  - id: b', '    kind: text', '    text: B', '    depends_on: [a]',
    ],
  });
  // Templates are read before the database is touched, so no database is needed to see the refusal.
  const started = promisify(execFile)(process.execPath, ['src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TEMPLATES_DIR: directory, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PORT: '0' },
    timeout: 30_000,
  });
  await assert.rejects(started, (error: Error & { code: number; stderr: string }) => {
    assert.equal(error.code, 1);
    const expected = `invalid template file ${path.join(directory, 'loop.yaml')}:\n  the dependencies form a cycle (a, b)`;
    assert.ok(error.stderr.includes(expected), error.stderr);
    return true;
  });
});
