import { Type } from 'typebox';
import { requestProviderJson } from './http.ts';
import {
  calendarDate, cappedCount, checkAnswer, endpointOf, plainSnippet, withSiteOperator, type SearchProvider, type VendorClientOptions,
} from './provider.ts';

/** The Search plan is $5.00 per 1,000 requests (api-dashboard.search.brave.com plans page). */
export const BRAVE_COST_PER_CALL_USD = 0.005;

/**
 * WebSearchApiResponse (api-dashboard.search.brave.com/app/documentation/web-search/responses): `type` is
 * always "search"; `web` is absent when nothing matched. `description` marks matches with <strong>.
 */
const BraveAnswer = Type.Object({
  type: Type.Literal('search'),
  web: Type.Optional(Type.Object({
    results: Type.Array(Type.Object({
      title: Type.String(),
      url: Type.String(),
      description: Type.Optional(Type.String()),
      page_age: Type.Optional(Type.String()),
    })),
  })),
});

/** Brave refuses an unknown or revoked key with 422 and this code rather than 401. */
const isRefusedToken = (status: number, body: unknown) =>
  status === 422 && (body as { error?: { code?: unknown } } | undefined)?.error?.code === 'SUBSCRIPTION_TOKEN_INVALID';

/** Brave Search: GET {baseUrl}/res/v1/web/search?q=&count= with `X-Subscription-Token`; a site is `site:` in the query; `text_decorations=false` asks for snippets without markup. */
export function createBraveProvider(options: VendorClientOptions): SearchProvider {
  return {
    name: 'brave',
    async search({ query, maxResults, siteFilter, signal }) {
      const url = endpointOf(options.baseUrl, '/res/v1/web/search');
      url.searchParams.set('q', withSiteOperator(query, siteFilter));
      url.searchParams.set('count', String(cappedCount(maxResults)));
      url.searchParams.set('text_decorations', 'false');
      const answer = await requestProviderJson({
        provider: 'brave', url, signal, timeoutMs: options.timeoutMs, maxAnswerBytes: options.maxAnswerBytes,
        credentialName: 'BRAVE_API_KEY', isAuthFailure: isRefusedToken,
        init: { method: 'GET', headers: { accept: 'application/json', 'x-subscription-token': options.apiKey } },
      });
      return (checkAnswer('brave', BraveAnswer, answer).web?.results ?? []).map((result) => ({
        title: plainSnippet(result.title), url: result.url, snippet: plainSnippet(result.description), date: calendarDate(result.page_age), source: 'brave',
      }));
    },
  };
}
