import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimVerdict } from '../../src/workflows/modes/research/model-answers/claims.ts';
import { aggregateVerdicts } from '../../src/workflows/modes/research/verification/aggregate-verdicts.ts';
import { rankEvidence } from '../../src/workflows/modes/research/verification/rank-evidence.ts';
import { loadCitationRules } from '../../src/workflows/modes/research/citations/citation-rules.ts';
import { collectCitations } from '../../src/workflows/modes/research/citations/collect-citations.ts';

const sources = [
  { title: 'The Nile', snippet: 'The Nile flows north through eleven countries.', content: 'The Nile is about 6,650 km long.\n\nIt is the longest river in Africa and ends in a delta on the Mediterranean.' },
  { title: 'Solar photovoltaics', snippet: '', content: 'Photovoltaic cells convert sunlight directly into electricity using semiconductors such as silicon.' },
  { title: 'The Amazon', snippet: 'The Amazon carries more water than any other river.', content: undefined },
  { title: 'Rivers of Africa', snippet: 'A list of rivers.', content: `${'Filler about geography and climate. '.repeat(40)}\n\nThe Nile, the longest river in Africa, is shared by eleven countries.` },
];

describe('evidence ranking for claims (BM25, MiniSearch)', () => {
  it('ranks the citations whose passages match a claim, best first, each citation once', () => {
    const [nile, solar] = rankEvidence(['The Nile is the longest river in Africa', 'Solar cells convert sunlight into electricity'], sources);
    assert.deepEqual(nile!.evidence.map((match) => match.citation).slice(0, 2).sort(), [1, 4]);
    assert.equal(new Set(nile!.evidence.map((match) => match.citation)).size, nile!.evidence.length);
    assert.ok(nile!.evidence.every((match, index, all) => index === 0 || all[index - 1]!.score >= match.score));
    assert.equal(solar!.evidence[0]!.citation, 2);
    assert.match(solar!.evidence[0]!.passage, /Photovoltaic cells convert sunlight/);
  });

  it('scores a long page by its matching passage, and shows that passage', () => {
    const [nile] = rankEvidence(['longest river in Africa shared by eleven countries'], sources, { passageChars: 200 });
    const fromList = nile!.evidence.find((match) => match.citation === 4)!;
    assert.match(fromList.passage, /^The Nile, the longest river in Africa/);
    assert.ok(fromList.passage.length <= 200);
  });

  it('finds nothing for a claim that shares no meaningful word with any citation, and keeps perClaim', () => {
    const [bananas, river] = rankEvidence(['Bananas are blue', 'river'], sources, { perClaim: 2 });
    assert.deepEqual(bananas!.evidence, []);
    assert.equal(river!.evidence.length, 2);
  });

  it('matches a plural or another tense of a long word', () => {
    const [claim] = rankEvidence(['semiconductor converts'], sources);
    assert.equal(claim!.evidence[0]?.citation, 2);
  });

  it('ranks the citations collected from tool outputs as they are, by their numbers', () => {
    const citations = collectCitations([
      { tool: 'web_search', output: { results: [{ title: 'Hubble', url: 'https://a.example/hubble', snippet: 'Hubble was launched in 1990.', source: 'x' }] }, error: null },
      { tool: 'web_fetch', output: { url: 'https://b.example/webb', final_url: 'https://b.example/webb', title: 'Webb', content: 'The James Webb Space Telescope launched on 25 December 2021.', truncated: false, status: 200, source: 'fixture' }, error: null },
    ], loadCitationRules('config/citation-credibility.yaml'), new Date('2026-01-01'));
    const [webb] = rankEvidence(['Webb launched in December 2021'], citations);
    assert.equal(citations[webb!.evidence[0]!.citation - 1]!.url, 'https://b.example/webb');
  });

  it('answers one entry per claim, with no sources at all', () => {
    assert.deepEqual(rankEvidence(['a claim'], []), [{ claim: 'a claim', evidence: [] }]);
  });
});

const verdict = (claim: string, overrides: Partial<ClaimVerdict>): ClaimVerdict =>
  ({ claim, verdict: 'supported', confidence: 0.9, supporting_citations: [1], conflicting_citations: [], ...overrides });

describe('verification summary', () => {
  it('counts verdicts, lists unsupported and unsure claims, conflicts and coverage', () => {
    const summary = aggregateVerdicts([
      verdict('A', { confidence: 0.9, supporting_citations: [1, 2] }),
      verdict('B', { confidence: 0.6, supporting_citations: [3], conflicting_citations: [2] }),
      verdict('C', { verdict: 'unsupported', confidence: 0.8, supporting_citations: [], conflicting_citations: [1] }),
      verdict('D', { verdict: 'insufficient_evidence', confidence: 0.3, supporting_citations: [] }),
    ], 3);
    assert.equal(summary.total_claims, 4);
    assert.equal(summary.supported_claims, 2);
    assert.deepEqual(summary.unsupported_claims, ['C']);
    assert.deepEqual(summary.insufficient_evidence_claims, ['D']);
    assert.equal(summary.overall_confidence, 0.375);
    assert.equal(summary.evidence_coverage, 0.5);
    assert.deepEqual(summary.conflicts, [
      { claim: 'B', supporting_citations: [3], conflicting_citations: [2] },
      { claim: 'C', supporting_citations: [], conflicting_citations: [1] },
    ]);
    assert.deepEqual(summary.claim_details.map((detail) => detail.claim), ['A', 'B', 'C', 'D']);
  });

  it('keeps only citation numbers that exist, and a support with none left is insufficient evidence', () => {
    const summary = aggregateVerdicts([
      verdict('A', { supporting_citations: [0, 2, 2, 9, 1.5], conflicting_citations: [2, 3] }),
      verdict('B', { supporting_citations: [7] }),
    ], 3);
    assert.deepEqual(summary.claim_details[0]!.supporting_citations, [2]);
    assert.deepEqual(summary.claim_details[0]!.conflicting_citations, [3], 'a citation cannot both support and contradict');
    assert.equal(summary.claim_details[1]!.verdict, 'insufficient_evidence');
    assert.equal(summary.supported_claims, 1);
    assert.deepEqual(summary.insufficient_evidence_claims, ['B']);
  });

  it('a report without claims has nothing supported and no confidence', () => {
    assert.deepEqual(aggregateVerdicts([], 5), {
      overall_confidence: 0, total_claims: 0, supported_claims: 0, unsupported_claims: [], insufficient_evidence_claims: [],
      conflicts: [], evidence_coverage: 0, claim_details: [],
    });
  });
});
