import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClaimExtractionSchema, ClaimVerdictsSchema } from '../../src/workflows/modes/research/model-answers/claims.ts';
import { CoverageEvaluationSchema, SubqueryGenerationSchema, wantsAnotherRound, type CoverageEvaluation } from '../../src/workflows/modes/research/model-answers/coverage.ts';
import { FactExtractionSchema, groundedFacts, summarizeFacts, type ExtractedFact } from '../../src/workflows/modes/research/model-answers/facts.ts';
import { parseModelAnswer } from '../../src/workflows/modes/research/model-answers/parse-model-answer.ts';
import { RefinementSchema } from '../../src/workflows/modes/research/model-answers/refinement.ts';

const fact = (overrides: Partial<ExtractedFact> = {}): ExtractedFact => ({
  statement: 'The Nile is about 6,650 km long.', category: 'Statistic', confidence: 0.9, source_citation: [1],
  entity_mentions: ['Nile'], temporal_marker: null, is_quantitative: true, contradictions: [], ...overrides,
});

const ANSWERS: Array<[string, Parameters<typeof parseModelAnswer>[0], unknown]> = [
  ['refinement', RefinementSchema, {
    refined_query: 'How long is the Nile compared with the Amazon?', research_areas: ['length measurements'], query_type: 'comparative',
    research_dimensions: [{ dimension: 'length', priority: 'high', questions: ['How is river length measured?'], source_types: ['encyclopedia'] }],
    exact_queries: ['"Nile length"'], detected_language: 'en',
  }],
  ['coverage evaluation', CoverageEvaluationSchema, { overall_coverage: 0.6, critical_gaps: ['source of the Nile'], optional_gaps: [], should_continue: true, recommended_action: 'continue' }],
  ['subquery generation', SubqueryGenerationSchema, { subqueries: [{ query: 'Nile source Lake Victoria', target_gap: 'source of the Nile', priority: 'high' }] }],
  ['claim extraction', ClaimExtractionSchema, { claims: ['The Nile is the longest river in Africa.'] }],
  ['claim verdicts', ClaimVerdictsSchema, { verdicts: [{ claim: 'x', verdict: 'insufficient_evidence', confidence: 0.4, supporting_citations: [], conflicting_citations: [2] }] }],
  ['fact extraction', FactExtractionSchema, { facts: [fact()] }],
];

describe('structured answers of the research calls', () => {
  for (const [name, schema, answer] of ANSWERS) {
    it(`a well-formed ${name} answer is accepted, and its schema is plain JSON Schema`, () => {
      assert.deepEqual(parseModelAnswer(schema, answer), { ok: true, value: answer });
      const json = JSON.parse(JSON.stringify(schema)) as { type: string; required: string[] };
      assert.equal(json.type, 'object');
      assert.ok(json.required.length > 0);
    });
  }

  it('an ill-formed answer is refused with the field that is wrong', () => {
    assert.deepEqual(parseModelAnswer(CoverageEvaluationSchema, { overall_coverage: 1.4, critical_gaps: [], optional_gaps: [], should_continue: false, recommended_action: 'complete' }),
      { ok: false, problem: 'the answer does not fit the schema (/overall_coverage: must be <= 1)' });
    const verdict = parseModelAnswer(ClaimVerdictsSchema, { verdicts: [{ claim: 'x', verdict: 'probably', confidence: 1, supporting_citations: [], conflicting_citations: [] }] });
    assert.equal(verdict.ok, false);
    assert.match((verdict as { problem: string }).problem, /\/verdicts\/0\/verdict/);
    assert.equal(parseModelAnswer(RefinementSchema, { refined_query: 'x', research_areas: [], research_dimensions: [], query_type: 'gossip' }).ok, false);
    assert.equal(parseModelAnswer(SubqueryGenerationSchema, { subqueries: [] }).ok, false);
    assert.equal(parseModelAnswer(FactExtractionSchema, { facts: [{ ...fact(), source_citation: [0] }] }).ok, false);
  });

  it('the loop goes on only when the evaluation asks to and names a critical gap', () => {
    const evaluation = (overrides: Partial<CoverageEvaluation>): CoverageEvaluation =>
      ({ overall_coverage: 0.5, critical_gaps: ['gap'], optional_gaps: [], should_continue: true, recommended_action: 'continue', ...overrides });
    assert.equal(wantsAnotherRound(evaluation({})), true);
    assert.equal(wantsAnotherRound(evaluation({ should_continue: false })), false);
    assert.equal(wantsAnotherRound(evaluation({ recommended_action: 'complete' })), false);
    assert.equal(wantsAnotherRound(evaluation({ critical_gaps: [], optional_gaps: ['nice to have'] })), false);
  });
});

describe('extracted facts and their summary', () => {
  it('keeps facts tied to existing citations, citation numbers cleaned and categories in lower case', () => {
    const facts = groundedFacts([
      fact({ source_citation: [2, 9, 2] }),
      fact({ statement: 'Cites nothing that exists', source_citation: [4] }),
      fact({ statement: 'Cites nothing', source_citation: [] }),
    ], 3);
    assert.deepEqual(facts.map((kept) => [kept.statement, kept.source_citation, kept.category]), [['The Nile is about 6,650 km long.', [2], 'statistic']]);
  });

  it('summarises totals, high confidence (0.8 and up), categories and contradictions', () => {
    assert.deepEqual(summarizeFacts([
      fact({ category: 'statistic', confidence: 0.8 }),
      fact({ category: 'statistic', confidence: 0.79, contradictions: ['Some sources give 6,850 km.'] }),
      fact({ category: 'event', confidence: 0.95, contradictions: ['a', 'b'], is_quantitative: false, temporal_marker: '1971' }),
    ]), { total_facts: 3, high_confidence: 2, categorized_facts: { statistic: 2, event: 1 }, contradiction_count: 3 });
    assert.deepEqual(summarizeFacts([]), { total_facts: 0, high_confidence: 0, categorized_facts: {}, contradiction_count: 0 });
  });
});
