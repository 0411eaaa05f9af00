import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { useGateway, waitForTask, type Gateway } from '../helpers/gateway.ts';
import { parseSseText } from '../helpers/sse-client.ts';

const QUESTION = 'Which renewable sources give electricity day and night, and since when have they been used?';
const RESEARCH_MODELS = ['service-quick-research', 'service-standard-research', 'service-deep-research'];

/** The report's `[n]` markers and the numbers its `## Sources` list gives a url. */
function citationsOf(report: string): { markers: number[]; listed: number[] } {
  const [body, sources = ''] = report.split(/^## Sources$/m);
  return {
    markers: [...new Set([...body.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])))].sort((a, b) => a - b),
    listed: [...sources.matchAll(/^\[(\d+)\] .*https?:\/\//gm)].map((match) => Number(match[1])),
  };
}

function assertCitedReport(report: string): void {
  const { markers, listed } = citationsOf(report);
  assert.ok(markers.length >= 3, `the report cites sources: ${report}`);
  assert.deepEqual(markers, listed, 'every marker has its line in ## Sources, and every line is cited');
}

/** The task behind a completion, read through the native API. */
async function taskOf(gateway: Gateway, taskId: string | null) {
  assert.ok(taskId, 'the completion names its task in X-Workflow-ID');
  const task = await waitForTask(gateway, taskId, 120_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  assert.equal(task.mode, 'research');
  return task;
}

describe('OpenAI research models over the fixture corpus (mock model)', () => {
  const gateway = useGateway({ env: { WEB_SEARCH_PROVIDER: 'fixture', MOCK_DELAY_MS: '200' } });
  const client = () => new OpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development', maxRetries: 0 });

  it('lists the three research models, each with a description; another research-like name is unknown', async () => {
    const ids = (await client().models.list()).data.map((model) => model.id);
    for (const id of RESEARCH_MODELS) {
      assert.ok(ids.includes(id), `${id} is listed`);
      const detail = await gateway().request('GET', `/v1/models/${id}`);
      assert.equal(detail.status, 200);
      assert.match(detail.headers.get('x-model-description') ?? '', /research/i);
    }
    const unknown = await gateway().request('POST', '/v1/chat/completions', { model: 'service-academic-research', messages: [{ role: 'user', content: QUESTION }] });
    assert.equal(unknown.status, 404, unknown.text);
    assert.deepEqual([unknown.body.error.type, unknown.body.error.code], ['invalid_request_error', 'model_not_found']);
    const { rows } = await gateway().sql.query('select count(*)::int as count from tasks');
    assert.equal(rows[0].count, 0, 'an unknown model runs nothing');
  });

  it('service-standard-research streams the cited report in several deltas, before verification runs, equal to the task\'s result', async () => {
    const { data: stream, response } = await client().chat.completions.create({
      model: 'service-standard-research', messages: [{ role: 'user', content: QUESTION }], stream: true, stream_options: { include_usage: true },
    }).withResponse();
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const contents = chunks.filter((chunk) => chunk.choices[0]?.delta?.content);
    assert.ok(contents.length > 1, `${contents.length} content deltas`);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' }, 'the first chunk carries the role');
    assert.ok(chunks.slice(1).every((chunk) => chunk.choices[0]?.delta?.role === undefined));

    const task = await taskOf(gateway(), response.headers.get('x-workflow-id'));
    const streamed = contents.map((chunk) => chunk.choices[0].delta.content).join('');
    assert.equal(streamed, task.result, 'the deltas are the final report, nothing more or less');
    assertCitedReport(streamed);
    assert.equal(task.unified_response.metadata.research_strategy, 'standard');
    assert.ok(task.unified_response.metadata.verification, 'the standard strategy verified the claims');

    // The report was on its way before the claims were checked and before the task completed.
    const serviceEvent = (type: string, agentId?: string) => chunks.findIndex((chunk) =>
      (chunk as { service_events?: any[] }).service_events?.some((event: any) => event.type === type && (agentId === undefined || event.agent_id === agentId)));
    const firstContent = chunks.indexOf(contents[0]);
    const verificationStarts = serviceEvent('PROGRESS', 'claim-extractor');
    assert.ok(verificationStarts > 0 && firstContent < verificationStarts, `content at chunk ${firstContent}, verification at ${verificationStarts}`);
    assert.ok(firstContent < serviceEvent('WORKFLOW_COMPLETED'));

    const last = chunks.at(-1)!;
    assert.equal(last.choices[0].finish_reason, 'stop');
    assert.deepEqual(last.choices[0].delta, {});
    assert.ok(last.usage && last.usage.total_tokens > 0, 'the usage rides on the last chunk');
  });

  it('a raw stream of service-quick-research: role first, report deltas, stop, then [DONE]', async () => {
    const answer = await gateway().request('POST', '/v1/chat/completions', { model: 'service-quick-research', stream: true, messages: [{ role: 'user', content: QUESTION }] });
    assert.equal(answer.status, 200, answer.text);
    const frames = parseSseText(answer.text).map((message) => message.data);
    assert.equal(frames.at(-1), '[DONE]');
    const chunks = frames.slice(0, -1).map((data) => JSON.parse(data));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' }, 'the role comes first');
    const deltas = chunks.map((chunk) => chunk.choices[0].delta).filter((delta) => delta.content);
    assert.ok(deltas.length > 1);
    assert.ok(deltas.every((delta) => delta.role === undefined));
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
    assert.equal(chunks.at(-1).usage, undefined, 'no usage unless asked for');
    const task = await taskOf(gateway(), answer.headers.get('x-workflow-id'));
    assert.equal(deltas.map((delta) => delta.content).join(''), task.result);
    assert.equal(task.unified_response.metadata.research_strategy, 'quick');
    assert.equal(task.unified_response.metadata.verification, undefined, 'the quick strategy does not verify');
  });

  it('when the coverage loop writes the report twice, the answer\'s deltas are the final cited report only', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', {
      query: QUESTION,
      context: { force_research: true, research_strategy: 'quick', iterative_research_enabled: true, iterative_max_iterations: 2, mock_coverage: ['gaps', 'complete'] },
    });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await taskOf(gateway(), submitted.body.task_id);
    const { rows: syntheses } = await gateway().sql.query(`select count(*)::int as count from usage_records where task_id = $1 and agent_id = 'research-synthesis'`, [task.task_id]);
    assert.equal(syntheses[0].count, 2, 'the report was written, then written again after the gaps were filled');
    const { rows: partials } = await gateway().sql.query(`select agent_id, message, payload from task_events where task_id = $1 and type = 'LLM_PARTIAL' order by seq`, [task.task_id]);
    const answerDeltas = partials.filter((partial) => partial.payload.final_answer === true);
    assert.ok(answerDeltas.length > 1 && answerDeltas.every((partial) => partial.agent_id === 'final_output'));
    assert.equal(answerDeltas.map((partial) => partial.message).join(''), task.result);
    assert.ok(partials.some((partial) => partial.agent_id === 'research-synthesis' && partial.payload.final_answer === undefined), 'the drafts stream as progress, unmarked');
  });

  it('service-deep-research answers non-streaming with the cited report of a deep research task', async () => {
    const { data: completion, response } = await client().chat.completions.create({ model: 'service-deep-research', messages: [{ role: 'user', content: QUESTION }] }).withResponse();
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    const report = completion.choices[0].message.content ?? '';
    assertCitedReport(report);
    assert.ok(completion.usage!.total_tokens > 0);
    const task = await taskOf(gateway(), response.headers.get('x-workflow-id'));
    assert.equal(report, task.result);
    assert.equal(task.unified_response.metadata.research_strategy, 'deep');
    assert.equal(task.unified_response.metadata.citations.length, citationsOf(report).listed.length, 'the task\'s citations are the report\'s sources');
  });
});
