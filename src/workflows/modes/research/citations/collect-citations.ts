import { scoreCredibility, type CitationRules } from './citation-rules.ts';
import { scoreQuality } from './citation-quality.ts';
import { doiOf, domainOf, normalizeUrl } from './normalize-url.ts';
import { collectSightings, type BlockedUrl, type SourceSighting, type ToolObservation, type ToolSource } from './tool-sightings.ts';

/** A citation as `metadata.citations[]` carries it (spec 2.6; reference §1.7's list). Scores are 0..1. */
export interface Citation {
  /** A url a tool returned for this task (the fetched one when a page was both found and fetched). */
  url: string;
  title: string;
  /** The site: the host without www. */
  source: string;
  snippet: string;
  published_date: string | null;
  credibility_score: number;
  quality_score: number;
  tool_source: ToolSource;
  /** The HTTP status of the fetch, when the page was fetched. */
  status_code: number | null;
  /** Why the page, found by a search, could not be read, when a tool tried and could not. */
  blocked_reason: string | null;
}

/** A citation with what the later phases need and metadata leaves out. */
export interface RankedCitation extends Citation {
  /** The page's text when it was fetched (verification reads it). */
  content: string | undefined;
  /** Every normalised url and DOI this page was seen under: a report naming any of them names this citation. */
  matchKeys: string[];
}

const SNIPPET_CHARS = 300;

/**
 * The task's citations (reference §1.9): every page its successful web_search / web_fetch / web_subpage_fetch /
 * web_crawl calls returned, one per DOI (else per normalised url), scored for credibility (the rules) and quality
 * (relevance, recency, completeness), ranked by quality × credibility, at most `max_per_domain` per site (the best
 * ranked kept) and `max_citations` in all. Nothing else can become a citation.
 */
export function collectCitations(observations: readonly ToolObservation[], rules: CitationRules, now: Date): RankedCitation[] {
  const { sightings, blocked } = collectSightings(observations);
  const scored = mergeSightings(sightings).map((merged) => scoreSource(merged, blocked, rules, now));
  const ranked = scored
    .map((citation, order) => ({ citation, order, rank: citation.quality_score * citation.credibility_score }))
    .sort((left, right) => right.rank - left.rank || left.order - right.order)
    .map((entry) => entry.citation);
  return capPerDomain(ranked, rules.max_per_domain).slice(0, rules.max_citations);
}

interface MergedSource extends SourceSighting {
  matchKeys: Set<string>;
}

/** One source per DOI, else per normalised url, in first-seen order; urls that are not http(s) are dropped. */
export function mergeSightings(sightings: readonly SourceSighting[]): MergedSource[] {
  const byKey = new Map<string, MergedSource>();
  for (const sighting of sightings) {
    const normalized = normalizeUrl(sighting.url);
    if (normalized === undefined) continue;
    const doi = doiOf(sighting.url) ?? (sighting.finalUrl ? doiOf(sighting.finalUrl) : undefined);
    const key = doi ? `doi:${doi}` : normalized;
    const finalKey = sighting.finalUrl ? normalizeUrl(sighting.finalUrl) : undefined;
    const keys = [key, normalized, ...(finalKey ? [finalKey] : [])];
    const existing = byKey.get(key);
    if (existing) {
      mergeInto(existing, sighting);
      for (const matchKey of keys) existing.matchKeys.add(matchKey);
    } else {
      byKey.set(key, { ...sighting, matchKeys: new Set(keys) });
    }
  }
  return [...byKey.values()];
}

/** Keeps the best relevance, fills what is missing, and takes a fetch's url, status and text over a search hit's. */
function mergeInto(target: MergedSource, sighting: SourceSighting): void {
  target.relevance = Math.max(target.relevance, sighting.relevance);
  target.title ||= sighting.title;
  target.snippet ||= sighting.snippet;
  target.publishedDate ??= sighting.publishedDate;
  if (sighting.toolSource !== 'fetch') return;
  if (target.toolSource !== 'fetch') {
    Object.assign(target, { url: sighting.url, finalUrl: sighting.finalUrl, toolSource: 'fetch', statusCode: sighting.statusCode });
  }
  if ((sighting.content?.length ?? 0) > (target.content?.length ?? 0)) target.content = sighting.content;
}

function scoreSource(source: MergedSource, blocked: readonly BlockedUrl[], rules: CitationRules, now: Date): RankedCitation {
  const snippet = source.snippet || excerpt(source.content ?? '');
  const site = domainOf(source.url);
  const blockedReason = source.toolSource === 'fetch' ? undefined
    : blocked.find((entry) => source.matchKeys.has(normalizeUrl(entry.url) ?? ''))?.reason;
  return {
    url: source.url,
    title: source.title || site,
    source: site,
    snippet,
    published_date: source.publishedDate ?? null,
    credibility_score: scoreCredibility(rules, site),
    quality_score: roundScore(scoreQuality({ relevance: source.relevance, publishedDate: source.publishedDate, hasTitle: source.title !== '', hasSnippet: snippet !== '' }, now)),
    tool_source: source.toolSource,
    status_code: source.statusCode ?? null,
    blocked_reason: blockedReason ?? null,
    content: source.content,
    matchKeys: [...source.matchKeys],
  };
}

/** Walks the ranking and keeps at most `maxPerDomain` citations of each site, so one site cannot fill the list. */
export function capPerDomain<T extends Pick<Citation, 'source'>>(ranked: readonly T[], maxPerDomain: number): T[] {
  const counts = new Map<string, number>();
  return ranked.filter((citation) => {
    const count = counts.get(citation.source) ?? 0;
    counts.set(citation.source, count + 1);
    return count < maxPerDomain;
  });
}

/** The metadata form of a citation: what clients read, without the page text and match keys. */
export function citationMetadata({ content: _content, matchKeys: _matchKeys, ...citation }: RankedCitation): Citation {
  return citation;
}

export interface CitationStats {
  total_sources: number;
  unique_domains: number;
  avg_quality: number;
  avg_credibility: number;
  /** unique_domains / total_sources */
  source_diversity: number;
}

export function citationStats(citations: readonly Citation[]): CitationStats {
  const total = citations.length;
  const domains = new Set(citations.map((citation) => citation.source)).size;
  const average = (pick: (citation: Citation) => number) => (total === 0 ? 0 : roundScore(citations.reduce((sum, citation) => sum + pick(citation), 0) / total));
  return {
    total_sources: total,
    unique_domains: domains,
    avg_quality: average((citation) => citation.quality_score),
    avg_credibility: average((citation) => citation.credibility_score),
    source_diversity: total === 0 ? 0 : roundScore(domains / total),
  };
}

const roundScore = (score: number) => Math.round(score * 1000) / 1000;

/** The opening of a fetched page's text, for a page no search described. */
function excerpt(content: string): string {
  const plain = content.replace(/[#>*_`|[\]]+/g, ' ').replace(/\s+/g, ' ').trim();
  return plain.length <= SNIPPET_CHARS ? plain : `${plain.slice(0, SNIPPET_CHARS).replace(/\s+\S*$/, '')}…`;
}
