import { Type } from 'typebox';
import { requestProviderJson } from './http.ts';
import {
  calendarDate, cappedCount, checkAnswer, endpointOf, plainSnippet, withSiteOperator, type SearchProvider, type VendorClientOptions,
} from './provider.ts';

/** Self-hosted: no per-call price. */
export const SEARXNG_COST_PER_CALL_USD = 0;

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** The `format=json` answer (docs.searxng.org/dev/search_api.html); `publishedDate` is null when the engine has none. */
const SearxngAnswer = Type.Object({
  query: Type.String(),
  results: Type.Array(Type.Object({
    url: Type.String(),
    title: Type.String(),
    content: Type.Optional(NullableString),
    engine: Type.Optional(Type.String()),
    publishedDate: Type.Optional(NullableString),
  })),
});

/**
 * SearXNG: GET {baseUrl}/search?q=&format=json, no key. The API has no result count, so the first page is
 * cut to the count asked for. An instance without the json format enabled answers 403.
 */
export function createSearxngProvider(options: Omit<VendorClientOptions, 'apiKey'>): SearchProvider {
  return {
    name: 'searxng',
    async search({ query, maxResults, siteFilter, signal }) {
      const url = endpointOf(options.baseUrl, '/search');
      url.searchParams.set('q', withSiteOperator(query, siteFilter));
      url.searchParams.set('format', 'json');
      url.searchParams.set('pageno', '1');
      const answer = await requestProviderJson({
        provider: 'searxng', url, signal, timeoutMs: options.timeoutMs, maxAnswerBytes: options.maxAnswerBytes,
        credentialName: 'SEARXNG_BASE_URL, and that the instance lists `json` under search.formats in its settings.yml',
        init: { method: 'GET', headers: { accept: 'application/json' } },
      });
      return checkAnswer('searxng', SearxngAnswer, answer).results.slice(0, cappedCount(maxResults)).map((result) => ({
        title: result.title,
        url: result.url,
        snippet: plainSnippet(result.content),
        date: calendarDate(result.publishedDate),
        source: result.engine ? `searxng (${result.engine})` : 'searxng',
      }));
    },
  };
}
