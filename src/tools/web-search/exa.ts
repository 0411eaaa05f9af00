import { Type } from 'typebox';
import { requestProviderJson } from './http.ts';
import { calendarDate, cappedCount, checkAnswer, endpointOf, plainSnippet, type SearchProvider, type VendorClientOptions } from './provider.ts';

/**
 * Search is $7 per 1,000 requests with contents for up to 10 results included, plus $1 per 1,000 results
 * beyond 10 (exa.ai/docs/reference/pricing); the base price is charged here.
 */
export const EXA_COST_PER_CALL_USD = 0.007;

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** POST /search answer (exa.ai/docs/reference/search): `title` and `publishedDate` may be null. */
const ExaAnswer = Type.Object({
  results: Type.Array(Type.Object({
    url: Type.String(),
    title: Type.Optional(NullableString),
    publishedDate: Type.Optional(NullableString),
    highlights: Type.Optional(Type.Array(Type.String())),
    text: Type.Optional(Type.String()),
  })),
});

/** Exa: POST {baseUrl}/search with `x-api-key`, highlights as the snippets, a site through `includeDomains`. */
export function createExaProvider(options: VendorClientOptions): SearchProvider {
  return {
    name: 'exa',
    async search({ query, maxResults, siteFilter, signal }) {
      const body = {
        query,
        type: 'auto',
        numResults: cappedCount(maxResults),
        contents: { highlights: true },
        ...(siteFilter ? { includeDomains: [siteFilter] } : {}),
      };
      const answer = await requestProviderJson({
        provider: 'exa', url: endpointOf(options.baseUrl, '/search'), signal, timeoutMs: options.timeoutMs, maxAnswerBytes: options.maxAnswerBytes,
        credentialName: 'EXA_API_KEY',
        init: { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey }, body: JSON.stringify(body) },
      });
      return checkAnswer('exa', ExaAnswer, answer).results.map((result) => ({
        title: result.title || result.url,
        url: result.url,
        snippet: plainSnippet(result.highlights?.join(' … ') ?? result.text),
        date: calendarDate(result.publishedDate),
        source: 'exa',
      }));
    },
  };
}
