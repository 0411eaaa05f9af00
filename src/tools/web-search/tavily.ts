import { Type } from 'typebox';
import { requestProviderJson } from './http.ts';
import { calendarDate, cappedCount, checkAnswer, endpointOf, plainSnippet, type SearchProvider, type VendorClientOptions } from './provider.ts';

/**
 * A basic-depth search costs 1 API credit; pay-as-you-go credits are $0.008
 * (docs.tavily.com/documentation/api-credits).
 */
export const TAVILY_COST_PER_CALL_USD = 0.008;

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** POST /search answer (docs.tavily.com/documentation/api-reference/endpoint/search); `published_date` comes with topic `news`. */
const TavilyAnswer = Type.Object({
  results: Type.Array(Type.Object({
    title: Type.String(),
    url: Type.String(),
    content: Type.String(),
    published_date: Type.Optional(NullableString),
  })),
});

/** Tavily search: POST {baseUrl}/search, the key as `Authorization: Bearer`, domains through `include_domains`. */
export function createTavilyProvider(options: VendorClientOptions): SearchProvider {
  return {
    name: 'tavily',
    async search({ query, maxResults, siteFilter, signal }) {
      const body = {
        query,
        max_results: cappedCount(maxResults),
        search_depth: 'basic',
        topic: 'general',
        include_answer: false,
        include_raw_content: false,
        include_images: false,
        ...(siteFilter ? { include_domains: [siteFilter] } : {}),
      };
      const answer = await requestProviderJson({
        provider: 'tavily', url: endpointOf(options.baseUrl, '/search'), signal, timeoutMs: options.timeoutMs, maxAnswerBytes: options.maxAnswerBytes,
        credentialName: 'TAVILY_API_KEY',
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
          body: JSON.stringify(body),
        },
      });
      return checkAnswer('tavily', TavilyAnswer, answer).results.map((result) => ({
        title: result.title, url: result.url, snippet: plainSnippet(result.content), date: calendarDate(result.published_date), source: 'tavily',
      }));
    },
  };
}
