import type { Config } from '../../config.ts';
import type { ToolDefinition } from '../registry.ts';
import { costPerSearchUsd, searchProviderFor } from './choose-provider.ts';
import { isOnSite, MAX_SEARCH_RESULTS } from './provider.ts';

const DEFAULT_RESULTS = 5;

/** web_search as listed; `webSearchToolFor` prices it for the configured provider. */
export const webSearchTool: ToolDefinition = {
  name: 'web_search',
  description: 'Searches the web and returns the best matching pages: title, url, a snippet of the matching passage, '
    + 'the publication date when known, and the source. Use web_fetch on a url to read the whole page.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 400, description: 'What to search for, in a few words' },
      max_results: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_RESULTS, default: DEFAULT_RESULTS, description: 'How many results at most' },
      site_filter: {
        type: 'string', maxLength: 253, pattern: '^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*$',
        description: 'Only results from this domain and its subdomains, e.g. "example.org"',
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  category: 'search',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  execute: async (input, context) => {
    const provider = searchProviderFor(context.settings.webSearch);
    const query = String(input.query);
    const maxResults = (input.max_results as number | undefined) ?? DEFAULT_RESULTS;
    const siteFilter = input.site_filter as string | undefined;
    const results = await provider.search({ query, maxResults, siteFilter, signal: context.signal });
    // Some engines ignore `site:`, and some vendors send more than asked: both promises are kept here.
    const kept = siteFilter ? results.filter((result) => isOnSite(result.url, siteFilter)) : results;
    return { provider: provider.name, query, results: kept.slice(0, maxResults) };
  },
};

/** web_search charged at the configured provider's price per call. */
export function webSearchToolFor(config: Readonly<Config>): ToolDefinition {
  return { ...webSearchTool, costPerUseUsd: costPerSearchUsd(config.webSearch.provider) };
}
