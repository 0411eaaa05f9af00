import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const QUESTION = 'Which renewable sources give electricity day and night, and since when have they been used?';

async function submitResearch(gateway: Gateway, context: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const answer = await gateway.request('POST', '/api/v1/tasks', { query: QUESTION, context: { force_research: true, ...context }, ...extra });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.task_id as string;
}

/** Every url any search or fetch of the task returned. */
async function urlsToolsReturned(gateway: Gateway, taskId: string): Promise<Set<string>> {
  const { rows } = await gateway.sql.query(`select output from tool_calls where task_id = $1 and error is null and tool in ('web_search', 'web_fetch')`, [taskId]);
  return new Set(rows.flatMap((row) => [...JSON.stringify(row.output).matchAll(/"(?:final_)?url":"(https?:\/\/[^"]+)"/g)].map((match) => match[1])));
}

async function callsBy(gateway: Gateway, taskId: string): Promise<Record<string, number>> {
  const { rows } = await gateway.sql.query('select agent_id, count(*)::int as calls from usage_records where task_id = $1 group by agent_id', [taskId]);
  return Object.fromEntries(rows.map((row) => [row.agent_id, row.calls]));
}

describe('deep research over the fixture corpus (mock model, no keys)', () => {
  const gateway = useGateway({ env: { WEB_SEARCH_PROVIDER: 'fixture' } });

  it('a standard research task: refined, researched by agents that search and read, a report whose every citation is a url a tool returned, verified claims', async () => {
    const taskId = await submitResearch(gateway(), { research_strategy: 'standard', mock_coverage: ['complete'] });
    const task = await waitForTask(gateway(), taskId, 120_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(task.mode, 'research');
    const unified = task.unified_response.metadata;
    assert.ok(unified.citations.length >= 3, `${unified.citations.length} citations`);
    const returned = await urlsToolsReturned(gateway(), taskId);
    for (const citation of unified.citations) {
      assert.ok(returned.has(citation.url), `${citation.url} was returned by a tool of this task`);
      assert.ok(citation.credibility_score > 0 && citation.quality_score > 0);
    }
    const [body, sources = ''] = task.result.split(/^## Sources$/m);
    const markers = new Set([...body.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])));
    const listed = [...sources.matchAll(/^\[(\d+)\] .*?(https?:\/\/\S+)/gm)].map((match) => ({ number: Number(match[1]), url: match[2] }));
    assert.deepEqual([...markers].sort((a, b) => a - b), listed.map((entry) => entry.number), 'every marker has its source and every source is cited');
    for (const entry of listed) assert.equal(entry.url.replace(/\)$/, ''), unified.citations[entry.number - 1].url);
    assert.ok(unified.verification, 'verified (the standard strategy verifies)');
    assert.ok(unified.verification.total_claims >= 1);
    assert.equal(unified.verification.claim_details.length, unified.verification.total_claims, 'a verdict per claim');
    assert.deepEqual(Object.keys(await callsBy(gateway(), taskId)).filter((id) => !/^research-\d+$/.test(id)).sort(),
      ['claim-extractor', 'claim-verifier', 'coverage-evaluator', 'research-refiner', 'research-synthesis']);
  });

  it('the coverage loop runs as many rounds as the evaluations ask (gaps, gaps, complete: 3), never more than iterative_max_iterations', async () => {
    const asked = await submitResearch(gateway(), { research_strategy: 'quick', iterative_research_enabled: true, iterative_max_iterations: 5, mock_coverage: ['gaps', 'gaps', 'complete'] });
    const capped = await submitResearch(gateway(), { research_strategy: 'quick', iterative_research_enabled: true, iterative_max_iterations: 2, mock_coverage: ['gaps', 'gaps', 'gaps'] });
    for (const [taskId, rounds] of [[asked, 3], [capped, 2]] as const) {
      const task = await waitForTask(gateway(), taskId, 120_000);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
      const calls = await callsBy(gateway(), taskId);
      assert.equal(calls['coverage-evaluator'], rounds, `${taskId}: coverage evaluations`);
      assert.equal(task.unified_response.metadata.iterations, rounds);
      // Each round that found gaps generated subqueries, filled them and wrote the report again.
      const filled = Math.min(rounds, 2);
      assert.equal(calls['subquery-generator'], filled);
      assert.equal(calls['research-synthesis'], 1 + filled);
      assert.equal(task.unified_response.metadata.verification, undefined, 'the quick strategy does not verify');
    }
  });

  it('facts on request: each tied to a citation of the report', async () => {
    const taskId = await submitResearch(gateway(), { research_strategy: 'quick', enable_fact_extraction: true });
    const task = await waitForTask(gateway(), taskId, 120_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { extracted_facts: facts, fact_summary: summary, citations } = task.unified_response.metadata;
    assert.ok(facts.length >= 1);
    assert.equal(summary.total_facts, facts.length);
    for (const fact of facts) assert.ok(fact.source_citation.every((n: number) => n >= 1 && n <= citations.length));
  });

  it('a phase that fails names itself, and the task keeps the report written so far, its citations and the findings of the agents that succeeded', async () => {
    // research-2 fails; the first coverage evaluation answers outside its schema, after the first report was written.
    const taskId = await submitResearch(gateway(), { research_strategy: 'standard', mock_failures: { 'research-2': 1 }, mock_coverage: [{ overall_coverage: 'most of it' }] });
    const task = await waitForTask(gateway(), taskId, 120_000);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /^research failed in coverage_eval_1: the answer does not fit the schema/);
    const unified = task.unified_response.metadata;
    assert.equal(unified.failed_phase, 'coverage_eval_1');
    assert.equal(task.metadata.failed_phase, 'coverage_eval_1');
    assert.equal(task.unified_response.result, task.result);
    assert.equal(task.unified_response.stop_reason, 'failed');
    assert.deepEqual(unified.partial_findings.map((finding: { agent_id: string }) => finding.agent_id), ['research-1'], 'only the agent that succeeded');
    assert.match(unified.partial_findings[0].answer, /^Findings:/);
    assert.equal(unified.agent_count, 2);
    assert.equal(unified.verification, undefined, 'verification never ran');
    // The report so far, cited as a completed one is: every marker is its citation, every citation a url a tool returned.
    assert.match(task.result, /^Research report: /);
    const [body, sources = ''] = task.result.split(/^## Sources$/m);
    const markers = new Set([...body.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1])));
    assert.ok(markers.size >= 1 && unified.citations.length === markers.size, `${markers.size} markers, ${unified.citations.length} citations`);
    const listed = [...sources.matchAll(/^\[(\d+)\] .*?(https?:\/\/\S+)/gm)].map((match) => ({ number: Number(match[1]), url: match[2].replace(/\)$/, '') }));
    assert.deepEqual(listed.map((entry) => entry.url), unified.citations.map((citation: { url: string }) => citation.url));
    const returned = await urlsToolsReturned(gateway(), taskId);
    for (const citation of unified.citations) assert.ok(returned.has(citation.url), `${citation.url} was returned by a tool of this task`);
  });

  it('a task whose every research agent fails keeps no report: it names agent_execution, with no findings and no citations', async () => {
    const taskId = await submitResearch(gateway(), { research_strategy: 'quick', mock_failures: { 'research-1': 1, 'research-2': 1 } });
    const task = await waitForTask(gateway(), taskId, 120_000);
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /^research failed in agent_execution: every research agent failed/);
    assert.equal(task.result, '');
    const unified = task.unified_response.metadata;
    assert.equal(unified.failed_phase, 'agent_execution');
    assert.deepEqual(unified.partial_findings, []);
    assert.deepEqual(unified.citations, []);
  });

  it('refuses research settings out of range by name, and writes nothing', async () => {
    for (const [context, message] of [
      [{ iterative_max_iterations: 9 }, /context\.iterative_max_iterations: must be <= 5/],
      [{ research_strategy: 'thorough' }, /research_strategy/],
    ] as const) {
      const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'x', context: { force_research: true, ...context } });
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.body.error, message);
    }
  });
});

/** Model calls this process started, by phase (agentgate_model_calls_total). */
async function modelCallsByPhase(gateway: Gateway): Promise<Record<string, number>> {
  const text = (await gateway.request('GET', '/metrics')).body as string;
  return Object.fromEntries([...text.matchAll(/^agentgate_model_calls_total\{phase="([^"]+)"\} (\d+)/gm)].map((match) => [match[1], Number(match[2])]));
}

test('kill -9 during gap filling: after a restart the refinement, the first agents and the first evaluation are not run again, and the report completes once', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const taskId = await submitResearch(gateway, {
    research_strategy: 'quick', iterative_research_enabled: true, iterative_max_iterations: 2, mock_coverage: ['gaps', 'complete'], mock_delay_ms: 1500,
  });
  await waitFor('a gap-filling agent to start', async () => {
    const { rows } = await gateway.sql.query(`select 1 from task_events where task_id = $1 and agent_id like 'gap1-%' limit 1`, [taskId]);
    return rows.length > 0 ? true : undefined;
  }, 90_000);
  await gateway.kill('SIGKILL');
  await gateway.restart();
  const task = await waitForTask(gateway, taskId, 120_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
  const calls = await modelCallsByPhase(gateway);
  assert.equal(calls['research-refinement'], undefined, 'the refinement was not asked again');
  assert.equal(calls['subquery-generation'], undefined, 'nor round 1\'s subqueries');
  assert.equal(calls['coverage-evaluation'], 1, 'round 2\'s evaluation only');
  assert.equal(calls['research-synthesis'], 1, 'the report written again with the gaps filled');
  // Two gap agents of at most three turns each (search, read, answer); the first round's agents ran before the kill.
  assert.ok(calls['research-agent'] >= 1 && calls['research-agent'] <= 6, `research-agent calls after the restart: ${calls['research-agent']}`);
  const { rows } = await gateway.sql.query(`select count(*) filter (where type = 'WORKFLOW_COMPLETED')::int as completed, count(*) filter (where type = 'LLM_OUTPUT')::int as outputs
    from task_events where task_id = $1`, [taskId]);
  assert.deepEqual(rows[0], { completed: 1, outputs: 1 });
});
