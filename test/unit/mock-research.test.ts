import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { TSchema } from 'typebox';
import { createMockModel } from '../../src/llm/mock-provider.ts';
import { ClaimExtractionSchema, ClaimVerdictsSchema } from '../../src/workflows/modes/research/model-answers/claims.ts';
import { CoverageEvaluationSchema, SubqueryGenerationSchema } from '../../src/workflows/modes/research/model-answers/coverage.ts';
import { FactExtractionSchema } from '../../src/workflows/modes/research/model-answers/facts.ts';
import { parseModelAnswer } from '../../src/workflows/modes/research/model-answers/parse-model-answer.ts';
import { RefinementSchema } from '../../src/workflows/modes/research/model-answers/refinement.ts';
import {
  claimExtractionPrompt, coveragePrompt, factExtractionPrompt, refinementPrompt, researchAgentPrompt, subqueryPrompt, synthesisPrompt,
  verificationPrompt, type NumberedSource, type PhasePrompt,
} from '../../src/workflows/modes/research/research-prompts.ts';

const model = createMockModel('mock-small');

const SOURCES: NumberedSource[] = [
  { title: 'Geothermal energy', url: 'https://corpus.agentgate.example/energy/geothermal', excerpt: 'The first geothermal power station began operating at Larderello in Tuscany, Italy, in 1911. Larderello still produces.' },
  { title: 'Hydropower', url: 'https://corpus.agentgate.example/energy/hydropower', excerpt: 'Hydropower supplies about 15 percent of the electricity generated worldwide.' },
  { title: 'Tidal power', url: 'https://corpus.agentgate.example/energy/tidal', excerpt: 'The Rance tidal power station in France opened in 1966 and was the largest for 45 years.' },
];

function messages(prompt: PhasePrompt, after: LanguageModelV3Prompt = []): LanguageModelV3Prompt {
  return [{ role: 'system', content: prompt.system }, { role: 'user', content: [{ type: 'text', text: prompt.user }] }, ...after];
}

async function answer(purpose: string, prompt: LanguageModelV3Prompt, extra: Partial<LanguageModelV3CallOptions> = {}, mock: Record<string, unknown> = {}) {
  const result = await model.doGenerate({ prompt, providerOptions: { mock: { purpose, ...mock } }, ...extra });
  return result.content;
}

async function structured<S extends TSchema>(purpose: string, prompt: PhasePrompt, schema: S, mock: Record<string, unknown> = {}) {
  const content = await answer(purpose, messages(prompt), { responseFormat: { type: 'json', schema: schema as never } }, mock);
  assert.equal(content[0].type, 'text');
  const parsed = parseModelAnswer(schema, JSON.parse((content[0] as { text: string }).text));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problem);
  return parsed.value;
}

const searchTool = { type: 'function' as const, name: 'web_search', inputSchema: { type: 'object' as const } };
const fetchTool = { type: 'function' as const, name: 'web_fetch', inputSchema: { type: 'object' as const } };

describe('the mock provider as a research partner', () => {
  it('refines a question into dimensions and a query type, following a confirmed plan', async () => {
    const refinement = await structured('research-refinement', refinementPrompt('Compare geothermal and tidal power, and their history'), RefinementSchema);
    assert.equal(refinement.query_type, 'comparative');
    assert.deepEqual(refinement.research_dimensions.map((dimension) => dimension.priority), ['high', 'medium', 'medium']);
    const planned = await structured('research-refinement', refinementPrompt('Tidal power', 'Focus on France first'), RefinementSchema);
    assert.match(planned.refined_query, /as planned: Focus on France first/);
  });

  it('a research agent searches for its assignment, reads the first two pages found, then reports them with their urls', async () => {
    const prompt = messages(researchAgentPrompt('history of geothermal power', 'Which renewable sources are oldest?'));
    const tools = { tools: [searchTool, fetchTool] };
    const [search] = await answer('research-agent', prompt, tools);
    assert.deepEqual(search, { type: 'tool-call', toolCallId: 'mock-research-search', toolName: 'web_search', input: JSON.stringify({ query: 'history of geothermal power', max_results: 5 }) });
    const afterSearch = [...prompt,
      { role: 'assistant' as const, content: [{ type: 'tool-call' as const, toolCallId: 's', toolName: 'web_search', input: {} }] },
      { role: 'tool' as const, content: [{ type: 'tool-result' as const, toolCallId: 's', toolName: 'web_search', output: { type: 'json' as const, value: { results: SOURCES.map((source) => ({ title: source.title, url: source.url, snippet: source.excerpt })) } } }] }];
    const [fetch] = await answer('research-agent', afterSearch, tools);
    assert.equal(fetch.type, 'tool-call');
    assert.deepEqual(JSON.parse((fetch as { input: string }).input), { urls: [SOURCES[0].url, SOURCES[1].url] });
    const afterFetch = [...afterSearch,
      { role: 'assistant' as const, content: [{ type: 'tool-call' as const, toolCallId: 'f', toolName: 'web_fetch', input: {} }] },
      { role: 'tool' as const, content: [{ type: 'tool-result' as const, toolCallId: 'f', toolName: 'web_fetch', output: { type: 'json' as const, value: { pages: [
        { url: SOURCES[0].url, title: 'Geothermal', content: '# Geothermal\n\nGeothermal energy uses heat from the interior of the Earth. More text.' },
        { url: SOURCES[1].url, error: 'HTTP 404' },
      ] } } }] }];
    const [findings] = await answer('research-agent', afterFetch, tools);
    assert.deepEqual(findings, { type: 'text', text: `Findings:\n- Geothermal energy uses heat from the interior of the Earth. (${SOURCES[0].url})` });
  });

  it('writes a report citing every numbered source, whose sentences become claims and facts', async () => {
    const [report] = await answer('research-synthesis', messages(synthesisPrompt('Which renewable sources are oldest?', [{ subtask: 'history', answer: 'Findings: …' }], SOURCES)));
    const text = (report as { text: string }).text;
    assert.match(text, /Larderello in Tuscany, Italy, in 1911 \[1\]\./);
    assert.deepEqual([...text.matchAll(/\[(\d)\]/g)].map((match) => match[1]), ['1', '2', '3']);

    const { claims } = await structured('claim-extraction', claimExtractionPrompt(text), ClaimExtractionSchema);
    assert.equal(claims.length, 3);
    assert.ok(claims.every((claim) => !claim.includes('[')), 'claims without markers');

    const { facts } = await structured('fact-extraction', factExtractionPrompt(text, SOURCES), FactExtractionSchema);
    assert.deepEqual(facts.map((fact) => [fact.category, fact.temporal_marker, fact.source_citation]), [
      ['event', '1911', [1]], ['statistic', null, [2]], ['statistic', '1966', [3]],
    ]);
  });

  it('judges a claim supported by a passage holding its words, and insufficient without one', async () => {
    const { verdicts } = await structured('claim-verification', verificationPrompt([
      { claim: 'The first geothermal power station opened at Larderello in 1911.', evidence: [{ citation: 1, score: 3, passage: SOURCES[0].excerpt }] },
      { claim: 'Wave power is the oldest renewable source.', evidence: [{ citation: 2, score: 1, passage: SOURCES[1].excerpt }] },
      { claim: 'Nothing matched this.', evidence: [] },
    ]), ClaimVerdictsSchema);
    assert.deepEqual(verdicts.map((verdict) => [verdict.verdict, verdict.supporting_citations]), [
      ['supported', [1]], ['insufficient_evidence', []], ['insufficient_evidence', []],
    ]);
  });

  it('follows scripted coverage evaluations, and otherwise stops once three sources are cited', async () => {
    const scripted = await structured('coverage-evaluation', coveragePrompt('Tidal power?', 'A report [1] [2] [3].', 1), CoverageEvaluationSchema, { coverage: 'gaps' });
    assert.equal(scripted.should_continue, true);
    assert.equal(scripted.critical_gaps.length, 2);
    const derived = await structured('coverage-evaluation', coveragePrompt('Tidal power?', 'A report [1] [2] [3].', 1), CoverageEvaluationSchema);
    assert.equal(derived.recommended_action, 'complete');
    const thin = await structured('coverage-evaluation', coveragePrompt('Tidal power?', 'A report [1].', 1), CoverageEvaluationSchema);
    assert.equal(thin.recommended_action, 'continue');

    const { subqueries } = await structured('subquery-generation', subqueryPrompt('Tidal power?', thin.critical_gaps), SubqueryGenerationSchema);
    assert.deepEqual(subqueries.map((subquery) => subquery.target_gap), thin.critical_gaps);
  });
});
