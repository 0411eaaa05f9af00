import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadCitationRules, parseCitationRules, scoreCredibility, type CitationRules } from '../../src/workflows/modes/research/citations/citation-rules.ts';
import { scoreQuality, scoreRecency } from '../../src/workflows/modes/research/citations/citation-quality.ts';
import { citationMetadata, citationStats, collectCitations } from '../../src/workflows/modes/research/citations/collect-citations.ts';
import type { ToolObservation } from '../../src/workflows/modes/research/citations/tool-sightings.ts';

const NOW = new Date('2026-01-20T12:00:00Z');
const shippedRules = loadCitationRules('config/citation-credibility.yaml');
const rules = (overrides: Partial<CitationRules> = {}): CitationRules => ({ ...shippedRules, ...overrides });

const result = (url: string, title = `Title of ${url}`, snippet = `Snippet of ${url}`, date?: string) => ({ title, url, snippet, source: 'fixture', ...(date ? { date } : {}) });
const search = (...results: object[]): ToolObservation => ({ tool: 'web_search', output: { provider: 'fixture', query: 'q', results }, error: null });
const page = (url: string, content = `Text of ${url}`, extra: object = {}) => ({ url, final_url: url, title: `Page ${url}`, content, truncated: false, status: 200, source: 'network', ...extra });
const fetched = (pageOrPages: object | object[]): ToolObservation =>
  ({ tool: 'web_fetch', output: Array.isArray(pageOrPages) ? { pages: pageOrPages } : pageOrPages, error: null });

describe('citation collection from tool observations', () => {
  it('takes pages from every web tool, and nothing from failed calls, other tools or unreadable pages', () => {
    const citations = collectCitations([
      search(result('https://a.example/1')),
      fetched(page('https://b.example/1')),
      fetched([page('https://c.example/1'), { url: 'https://c.example/2', error: 'timed out' }, page('https://c.example/3', 'Not found', { status: 404 })]),
      { tool: 'web_subpage_fetch', output: { url: 'https://d.example/', pages: [page('https://d.example/about')] }, error: null },
      { tool: 'web_crawl', output: { url: 'https://e.example/', robots: 'allowed', pages: [page('https://e.example/'), page('https://e.example/x')], disallowed_by_robots: ['https://e.example/private'], left_by_page_cap: 0 }, error: null },
      { tool: 'web_search', output: null, error: 'rate limited' },
      { tool: 'web_fetch', output: page('https://failed.example/'), error: 'the call failed' },
      { tool: 'calculator', output: { url: 'https://calc.example/' }, error: null },
      search(result('mailto:someone@example.com'), result('javascript:alert(1)'), { title: 'no url' }),
    ], rules(), NOW);
    assert.deepEqual(citations.map((citation) => citation.url).sort(), [
      'https://a.example/1', 'https://b.example/1', 'https://c.example/1', 'https://d.example/about', 'https://e.example/', 'https://e.example/x',
    ]);
  });

  it('reads outputs stored as JSON text', () => {
    const citations = collectCitations([{ tool: 'web_fetch', output: JSON.stringify(page('https://a.example/x')), error: null }], rules(), NOW);
    assert.deepEqual(citations.map((citation) => citation.url), ['https://a.example/x']);
  });

  it('dedupes by normalised url: best relevance, missing fields filled, the fetched url, status and text preferred', () => {
    const [citation, ...others] = collectCitations([
      search(result('https://www.example.com/report/?utm_source=x', '', 'The matching passage.', '2026-01-18')),
      fetched(page('https://example.com/report', 'The whole page text.')),
      search(result('HTTPS://EXAMPLE.COM/report#part', 'Late title', 'Another passage.')),
    ], rules(), NOW);
    assert.equal(others.length, 0);
    assert.equal(citation!.url, 'https://example.com/report');
    assert.equal(citation!.tool_source, 'fetch');
    assert.equal(citation!.status_code, 200);
    assert.equal(citation!.title, 'Page https://example.com/report', 'the fetch filled the title the first search left empty');
    assert.equal(citation!.snippet, 'The matching passage.');
    assert.equal(citation!.published_date, '2026-01-18');
    assert.equal(citation!.content, 'The whole page text.');
    // fetched relevance 0.8 (beats the search's 0.7), a 2-day-old date (recency 1.0), date + title + snippet.
    assert.equal(citation!.quality_score, 0.96);
  });

  it('dedupes by DOI first, across hosts', () => {
    const citations = collectCitations([
      search(result('https://doi.org/10.1038/NATURE12373', 'Paper')),
      fetched(page('https://www.nature.com/articles/x', 'Full text', { final_url: 'https://www.nature.com/doi/10.1038/nature12373' })),
      search(result('https://dx.doi.org/10.1038/nature12373?utm_source=scholar')),
    ], rules(), NOW);
    assert.equal(citations.length, 1);
    assert.equal(citations[0]!.url, 'https://www.nature.com/articles/x');
    assert.ok(citations[0]!.matchKeys.includes('doi:10.1038/nature12373'));
  });

  it('says why a found page could not be read, and forgets it once a fetch succeeds', () => {
    const citations = collectCitations([
      search(result('https://a.example/1'), result('https://b.example/1'), result('https://c.example/1')),
      fetched([{ url: 'https://a.example/1', error: 'connection refused' }, page('https://b.example/1', 'Forbidden', { status: 403 })]),
      { tool: 'web_crawl', output: { pages: [], disallowed_by_robots: ['https://c.example/1/'] }, error: null },
      fetched({ url: 'https://b.example/1', error: 'later failure' }),
    ], rules(), NOW);
    const reasons = Object.fromEntries(citations.map((citation) => [citation.url, citation.blocked_reason]));
    assert.deepEqual(reasons, { 'https://a.example/1': 'connection refused', 'https://b.example/1': 'HTTP 403', 'https://c.example/1': 'disallowed by robots.txt' });
    const retried = collectCitations([search(result('https://a.example/1')), fetched({ url: 'https://a.example/1', error: 'x' }), fetched(page('https://a.example/1'))], rules(), NOW);
    assert.equal(retried[0]!.blocked_reason, null);
    assert.equal(retried[0]!.tool_source, 'fetch');
  });

  it('ranks by quality × credibility, keeps at most max_per_domain per site (the best ones), then the first max_citations', () => {
    const observations = [
      search(...['1', '2', '3', '4'].map((n) => result(`https://blog.example/${n}`))),
      search(result('https://mit.edu/paper'), result('https://www.reddit.com/r/x')),
    ];
    const capped = collectCitations(observations, rules({ max_per_domain: 2 }), NOW);
    assert.deepEqual(capped.map((citation) => citation.url), ['https://mit.edu/paper', 'https://blog.example/1', 'https://blog.example/2', 'https://www.reddit.com/r/x']);
    assert.deepEqual(collectCitations(observations, rules({ max_per_domain: 2, max_citations: 2 }), NOW).map((citation) => citation.url),
      ['https://mit.edu/paper', 'https://blog.example/1']);
    assert.equal(collectCitations(observations, rules(), NOW).length, 6, 'the shipped cap leaves a small task alone');
  });

  it('gives clients the spec fields and none of the internals', () => {
    const [citation] = collectCitations([fetched(page('https://www.bbc.co.uk/news/1'))], rules(), NOW);
    const metadata = citationMetadata(citation!);
    assert.deepEqual(Object.keys(metadata).sort(), ['blocked_reason', 'credibility_score', 'published_date', 'quality_score', 'snippet', 'source', 'status_code', 'title', 'tool_source', 'url']);
    assert.equal(metadata.source, 'bbc.co.uk');
    assert.equal(metadata.credibility_score, 0.75);
    assert.equal(metadata.snippet, 'Text of https://www.bbc.co.uk/news/1');
    assert.deepEqual(citationStats([metadata, { ...metadata, url: 'https://x.example', source: 'x.example', credibility_score: 0.6 }]),
      { total_sources: 2, unique_domains: 2, avg_quality: metadata.quality_score, avg_credibility: 0.675, source_diversity: 1 });
  });
});

describe('credibility and quality scores', () => {
  it('scores TLDs first, then domain groups (subdomains included), else the default', () => {
    assert.equal(scoreCredibility(shippedRules, 'cs.stanford.edu'), 0.85);
    assert.equal(scoreCredibility(shippedRules, 'www.ox.ac.uk'), 0.85);
    assert.equal(scoreCredibility(shippedRules, 'data.census.gov'), 0.8);
    assert.equal(scoreCredibility(shippedRules, 'arxiv.org'), 0.85);
    assert.equal(scoreCredibility(shippedRules, 'export.arxiv.org'), 0.85);
    assert.equal(scoreCredibility(shippedRules, 'reuters.com'), 0.75);
    assert.equal(scoreCredibility(shippedRules, 'en.wikipedia.org'), 0.7);
    assert.equal(scoreCredibility(shippedRules, 'reddit.com'), 0.55);
    assert.equal(scoreCredibility(shippedRules, 'x.com'), 0.5);
    assert.equal(scoreCredibility(shippedRules, 'notreddit.com'), 0.6, 'a domain matches whole labels only');
    assert.equal(scoreCredibility(shippedRules, 'corpus.agentgate.example'), 0.6);
  });

  it('weighs recency in steps, and an unknown or future date as old', () => {
    const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString().slice(0, 10);
    assert.deepEqual([3, 10, 45, 200].map((days) => scoreRecency(daysAgo(days), NOW)), [1, 0.7, 0.4, 0.2]);
    assert.equal(scoreRecency(undefined, NOW), 0.2);
    assert.equal(scoreRecency('soon', NOW), 0.2);
    assert.equal(scoreRecency('2027-06-01', NOW), 0.2);
  });

  it('adds relevance, recency and completeness, capped at 1', () => {
    assert.equal(scoreQuality({ relevance: 0.5, publishedDate: undefined, hasTitle: false, hasSnippet: false }, NOW), 0.5 * 0.7 + 0.2 * 0.3);
    assert.ok(Math.abs(scoreQuality({ relevance: 0.5, publishedDate: undefined, hasTitle: true, hasSnippet: true }, NOW) - (0.41 + 0.067)) < 1e-9);
    assert.equal(scoreQuality({ relevance: 1, publishedDate: '2026-01-19', hasTitle: true, hasSnippet: true }, NOW), 1);
  });
});

describe('the citation credibility file', () => {
  it('the shipped file is valid and follows the reference scores', () => {
    assert.equal(shippedRules.default_score, 0.6);
    assert.deepEqual(shippedRules.tld_rules.slice(0, 4).map((rule) => [rule.suffix, rule.score]), [['.edu', 0.85], ['.ac.uk', 0.85], ['.edu.au', 0.85], ['.gov', 0.8]]);
  });

  it('an invalid file is refused naming it and every problem', () => {
    const text = readFileSync('config/citation-credibility.yaml', 'utf8').replace('default_score: 0.60', 'default_score: 1.5').replace('max_per_domain: 10', 'max_per_domain: none');
    assert.throws(() => parseCitationRules(text, 'config/bad-credibility.yaml'), (error: Error) =>
      /invalid citation credibility file config\/bad-credibility\.yaml/.test(error.message) && /\/default_score/.test(error.message) && /\/max_per_domain/.test(error.message));
    assert.throws(() => parseCitationRules('tld_rules: [', 'broken.yaml'), /invalid citation credibility file broken\.yaml/);
    assert.throws(() => loadCitationRules('config/no-such-file.yaml'), /invalid citation credibility file config\/no-such-file\.yaml:\n {2}ENOENT/);
  });
});
