import type { ToolContext, ToolDefinition } from '../registry.ts';
import { fetchEach, fetchPage, isPageError, maxLengthParameter, type PageError, type WebPage } from './fetch-page.ts';
import { offlineCorpusOf } from './offline-pages.ts';
import { ALLOW_EVERYTHING, robotsRulesFor } from './robots-rules.ts';

const DEFAULT_DEPTH = 1;
const MAX_DEPTH = 3;
const DEFAULT_PAGES = 10;
const MAX_PAGES = 30;
const DEFAULT_MAX_LENGTH = 3_000;

export const webCrawlTool: ToolDefinition = {
  name: 'web_crawl',
  description: 'Explores one site from a starting page: reads it, then the pages it links to on the same host, level '
    + `by level, down to max_depth links away (default ${DEFAULT_DEPTH}, at most ${MAX_DEPTH}) and up to max_pages pages `
    + `(default ${DEFAULT_PAGES}, at most ${MAX_PAGES}). The site's robots.txt is honoured. Each page comes back as web_fetch returns it.`,
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string', minLength: 1, maxLength: 2048, description: 'The page to start from' },
      max_depth: { type: 'integer', minimum: 0, maximum: MAX_DEPTH, default: DEFAULT_DEPTH, description: 'How many links away from the start page to go' },
      max_pages: { type: 'integer', minimum: 1, maximum: MAX_PAGES, default: DEFAULT_PAGES, description: 'How many pages to read at most' },
      max_length: maxLengthParameter(DEFAULT_MAX_LENGTH),
    },
    required: ['url'],
    additionalProperties: false,
  },
  category: 'web',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  execute: async (input, context) => crawl(context, {
    start: parseStartUrl(String(input.url)),
    maxDepth: (input.max_depth as number | undefined) ?? DEFAULT_DEPTH,
    maxPages: (input.max_pages as number | undefined) ?? DEFAULT_PAGES,
    maxLength: (input.max_length as number | undefined) ?? DEFAULT_MAX_LENGTH,
  }),
};

interface CrawlLimits { start: URL; maxDepth: number; maxPages: number; maxLength: number }

interface Crawl {
  pages: Array<WebPage | PageError>;
  seen: Set<string>;
  disallowed: string[];
}

/** Breadth first: every page of one level before the next, so the page cap keeps the pages nearest the start. */
async function crawl(context: ToolContext, limits: CrawlLimits) {
  const { start, maxDepth, maxPages } = limits;
  const robots = offlineCorpusOf(context.settings)?.find(start.toString()) ? ALLOW_EVERYTHING : await robotsRulesFor(start, context);
  const state: Crawl = { pages: [], seen: new Set([start.toString()]), disallowed: [] };
  let level = [start.toString()];
  let leftByPageCap = 0;
  for (let depth = 0; depth <= maxDepth && level.length > 0 && state.pages.length < maxPages; depth++) {
    const allowed = await robots.allowed(level);
    const isAllowed = new Set(allowed);
    state.disallowed.push(...level.filter((url) => !isAllowed.has(url)));
    const room = maxPages - state.pages.length;
    leftByPageCap += Math.max(0, allowed.length - room);
    const links = await crawlLevel(context, limits, state, allowed.slice(0, room));
    level = depth < maxDepth ? unseenOnHost(links, start.host, state.seen) : [];
  }
  // A level still waiting here was left by the page cap (past max_depth, none is collected).
  leftByPageCap += level.length;
  return { url: start.toString(), robots: robots.summary, pages: state.pages, disallowed_by_robots: state.disallowed, left_by_page_cap: leftByPageCap };
}

/** Fetches one level's pages into the crawl; returns the links they hold. */
async function crawlLevel(context: ToolContext, limits: CrawlLimits, state: Crawl, urls: string[]): Promise<string[]> {
  const fetched = await fetchEach(urls, context, (url) => fetchPage(url, context, limits.maxLength));
  state.pages.push(...fetched.map((result) => (isPageError(result) ? result : result.page)));
  return fetched.flatMap((result) => (isPageError(result) ? [] : result.links));
}

function unseenOnHost(links: string[], host: string, seen: Set<string>): string[] {
  const next: string[] = [];
  for (const link of links) {
    const url = URL.parse(link);
    if (!url || url.host !== host) continue;
    url.hash = '';
    const key = url.toString();
    if (!seen.has(key)) next.push(key);
    seen.add(key);
  }
  return next;
}

function parseStartUrl(url: string): URL {
  const start = URL.parse(url);
  if (!start) throw new Error(`not a valid URL: ${url}`);
  start.hash = '';
  return start;
}
