import type { ToolDefinition } from '../registry.ts';
import { fetchEach, fetchPage, maxLengthParameter } from './fetch-page.ts';

const MAX_PATHS = 10;
const DEFAULT_MAX_LENGTH = 5_000;

export const webSubpageFetchTool: ToolDefinition = {
  name: 'web_subpage_fetch',
  description: 'Fetches chosen pages of one site: give the site\'s `url` and the `paths` to read there (e.g. "/about", '
    + '"/pricing"). Pages on another host are refused. Each page comes back as web_fetch returns it.',
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string', minLength: 1, maxLength: 2048, description: 'The site, e.g. "https://example.org"' },
      paths: {
        type: 'array', items: { type: 'string', minLength: 1, maxLength: 2048 }, minItems: 1, maxItems: MAX_PATHS,
        description: `Paths on that site (at most ${MAX_PATHS}), relative to its url`,
      },
      max_length: maxLengthParameter(DEFAULT_MAX_LENGTH),
    },
    required: ['url', 'paths'],
    additionalProperties: false,
  },
  category: 'web',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  execute: async (input, context) => {
    const site = parseSiteUrl(String(input.url));
    const maxLength = (input.max_length as number | undefined) ?? DEFAULT_MAX_LENGTH;
    const urls = [...new Set((input.paths as string[]).map((path) => URL.parse(path, site)?.toString() ?? path))];
    const pages = await fetchEach(urls, context, async (url) => {
      if (URL.parse(url)?.host !== site.host) throw new Error(`not on ${site.host}: web_subpage_fetch reads one site only`);
      return (await fetchPage(url, context, maxLength)).page;
    });
    return { url: site.toString(), pages };
  },
};

function parseSiteUrl(url: string): URL {
  const site = URL.parse(url);
  if (!site) throw new Error(`not a valid URL: ${url}`);
  return site;
}
