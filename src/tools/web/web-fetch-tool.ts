import type { ToolDefinition } from '../registry.ts';
import { fetchEach, fetchPage, maxLengthParameter } from './fetch-page.ts';

const MAX_URLS = 10;
const DEFAULT_MAX_LENGTH = 10_000;

const urlParameter = { type: 'string', minLength: 1, maxLength: 2048 } as const;

export const webFetchTool: ToolDefinition = {
  name: 'web_fetch',
  description: 'Fetches web pages and returns their readable content: the main text of an HTML page as Markdown '
    + '(without navigation), the text of a PDF, plain text and JSON as they are. Give `url` for one page or `urls` '
    + `for up to ${MAX_URLS} at once. Each page comes back with url, final_url, title, content, truncated, status and source `
    + '(network, or fixture for a page of the offline corpus); in a batch, a url that fails comes back as {url, error}.',
  parameters: {
    type: 'object',
    properties: {
      url: { ...urlParameter, description: 'The page to fetch (http or https)' },
      urls: { type: 'array', items: urlParameter, minItems: 1, maxItems: MAX_URLS, description: `Several pages to fetch (at most ${MAX_URLS})` },
      max_length: maxLengthParameter(DEFAULT_MAX_LENGTH),
    },
    additionalProperties: false,
  },
  category: 'web',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  execute: async (input, context) => {
    const maxLength = (input.max_length as number | undefined) ?? DEFAULT_MAX_LENGTH;
    const fetchOne = async (url: string) => (await fetchPage(url, context, maxLength)).page;
    if (Array.isArray(input.urls)) {
      const requested = (typeof input.url === 'string' ? [input.url, ...input.urls] : input.urls) as string[];
      const urls = [...new Set(requested)].slice(0, MAX_URLS);
      return { pages: await fetchEach(urls, context, fetchOne) };
    }
    if (typeof input.url !== 'string') throw new Error('give `url` (one page) or `urls` (several)');
    return fetchOne(input.url);
  },
};
