import type { ToolDefinition } from '../registry.ts';
import { costPerSearchUsd, searchProviderFor } from '../web-search/choose-provider.ts';
import type { SearchResult } from '../web-search/provider.ts';

const DEFAULT_CANDIDATES = 10;
const RESULTS_PER_QUERY = 10;

interface Candidate { domain: string; name: string; url: string; snippet: string; queries: string[]; hits: number }

/** The queries a person would try: who competes with the company, what replaces it, and (given) its market. */
export function discoveryQueries(company: string, market: string | undefined): string[] {
  return [`${company} competitors`, `${company} alternatives`, ...(market ? [`${market} ${company} vs`, market] : [])];
}

/**
 * Finds the company's likely competitors with the configured web search: every site that the discovery queries
 * find, other than the company's own, is a candidate, ranked by how many queries found it and how high.
 */
export async function discoverCompetitors(input: { company: string; domain?: string; market?: string; maxCandidates: number }, search: (query: string) => Promise<SearchResult[]>) {
  const queries = discoveryQueries(input.company, input.market);
  const answers = await Promise.all(queries.map(async (query) => ({ query, results: await search(query) })));
  const own = input.domain?.toLowerCase().replace(/^www\./, '');
  const candidates = new Map<string, Candidate & { score: number }>();
  for (const { query, results } of answers) {
    results.forEach((result, rank) => {
      const domain = domainOf(result.url);
      if (!domain || (own && (domain === own || domain.endsWith(`.${own}`)))) return;
      const entry = candidates.get(domain) ?? { domain, name: result.title, url: result.url, snippet: result.snippet, queries: [], hits: 0, score: 0 };
      if (!entry.queries.includes(query)) entry.queries.push(query);
      entry.hits += 1;
      entry.score += 1 / (rank + 1);
      candidates.set(domain, entry);
    });
  }
  const ranked = [...candidates.values()].sort((a, b) => b.queries.length - a.queries.length || b.score - a.score || a.domain.localeCompare(b.domain));
  return { company: input.company, queries, competitors: ranked.slice(0, input.maxCandidates).map(({ score: _score, ...candidate }) => candidate) };
}

function domainOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return undefined;
  }
}

export const competitorDiscoverTool: ToolDefinition = {
  name: 'competitor_discover',
  description: 'Finds a company\'s likely competitors with web search ("<company> competitors", "… alternatives", its market): the sites found, other than its own, ranked by how many searches found them, each with the page and snippet that found it.',
  parameters: {
    type: 'object',
    properties: {
      company: { type: 'string', minLength: 1, maxLength: 200, description: 'The company or product name' },
      domain: { type: 'string', maxLength: 253, description: 'Its own website\'s domain, left out of the results' },
      market: { type: 'string', maxLength: 200, description: 'Its market or category, e.g. "note-taking app"' },
      max_competitors: { type: 'integer', minimum: 1, maximum: 50, default: DEFAULT_CANDIDATES, description: 'How many candidates at most' },
    },
    required: ['company'],
    additionalProperties: false,
  },
  category: 'search',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  namedOnly: true,
  async execute(input, context) {
    const provider = searchProviderFor(context.settings.webSearch);
    const found = await discoverCompetitors({
      company: String(input.company),
      domain: input.domain as string | undefined,
      market: input.market as string | undefined,
      maxCandidates: (input.max_competitors as number | undefined) ?? DEFAULT_CANDIDATES,
    }, (query) => provider.search({ query, maxResults: RESULTS_PER_QUERY, signal: context.signal }));
    return { provider: provider.name, ...found, searches: found.queries.length, cost_per_search_usd: costPerSearchUsd(context.settings.webSearch.provider) };
  },
};
