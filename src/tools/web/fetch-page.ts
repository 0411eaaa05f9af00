import type { JSONSchema7 } from '@ai-sdk/provider';
import pLimit from 'p-limit';
import { guardedFetch } from '../network/guarded-fetch.ts';
import type { ToolContext } from '../registry.ts';
import { cutText } from './cut-text.ts';
import type { FixturePage } from './fixture-corpus.ts';
import { offlineCorpusOf } from './offline-pages.ts';
import { parseInWorker } from './parse-pool.ts';

/** One fetched page as the web tools return it. */
export interface WebPage {
  url: string;
  /** Where redirects led. */
  final_url: string;
  title: string;
  /** Markdown of the main content (HTML), the text (PDF, plain text, JSON). */
  content: string;
  /** Cut at `max_length` characters or at the size cap. */
  truncated: boolean;
  status: number;
  /** `fixture`: served from the offline corpus, with no network access. */
  source: 'network' | 'fixture';
  /** Present when the page was read otherwise than usual (an HTML page as plain text), saying why. */
  notice?: string;
}

/** A url of a batch that could not be fetched; the others are not affected. */
export interface PageError { url: string; error: string }

export interface FetchedPage {
  page: WebPage;
  /** Links a crawl may follow: the page's own, or for a corpus page the corpus pages of its host. */
  links: string[];
}

/** Our name in User-Agent and the token robots.txt rules are matched against. */
export const USER_AGENT = 'agentgate';

/** Sent with every request of the web tools, robots.txt included. */
export const WEB_TOOL_HEADERS = {
  'user-agent': `${USER_AGENT}/0.1 (web tools of an agent gateway)`,
  accept: 'text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.5',
};

export const MAX_LENGTH_LIMIT = 100_000;
/** Pages fetched at once by one call: enough to be quick, few enough to be polite to one site. */
const CONCURRENT_FETCHES = 4;

export function maxLengthParameter(defaultChars: number): JSONSchema7 {
  return {
    type: 'integer', minimum: 100, maximum: MAX_LENGTH_LIMIT, default: defaultChars,
    description: `Characters of content kept per page (default ${defaultChars})`,
  };
}

/** A page through the network guard, or from the offline corpus when it is one of its pages. */
export async function fetchPage(url: string, context: ToolContext, maxLength: number): Promise<FetchedPage> {
  const corpus = offlineCorpusOf(context.settings);
  const offline = corpus?.find(url);
  if (corpus && offline) return { page: fixturePage(url, offline, maxLength), links: corpusLinksOn(offline, corpus.pages) };
  return fetchFromNetwork(url, context, maxLength);
}

async function fetchFromNetwork(url: string, context: ToolContext, maxLength: number): Promise<FetchedPage> {
  const response = await guardedFetch(url, { network: context.settings.network, signal: context.signal, headers: WEB_TOOL_HEADERS });
  const body = { url: response.finalUrl, contentType: response.headers.get('content-type') ?? undefined, bytes: response.body, isTruncated: response.bodyTruncated };
  const { title, content, truncated, links, notice } = await parseInWorker({ kind: 'content', body, maxLength }, context, context.settings.parse);
  const isTruncated = truncated || response.bodyTruncated;
  const page: WebPage = { url, final_url: response.finalUrl, title, content, truncated: isTruncated, status: response.status, source: 'network' };
  return { page: notice ? { ...page, notice } : page, links };
}

/** Fetches every url, a few at a time; one that fails is reported in its place. A cancelled task stops them all. */
export async function fetchEach<T>(urls: string[], context: ToolContext, fetchOne: (url: string) => Promise<T>): Promise<Array<T | PageError>> {
  const limit = pLimit(CONCURRENT_FETCHES);
  return Promise.all(urls.map((url) => limit(async () => {
    try {
      return await fetchOne(url);
    } catch (error) {
      if (context.signal.aborted) throw context.signal.reason;
      return { url, error: error instanceof Error ? error.message : String(error) };
    }
  })));
}

export const isPageError = (result: object): result is PageError => 'error' in result;

function fixturePage(url: string, page: FixturePage, maxLength: number): WebPage {
  const { content, truncated } = cutText(page.text, maxLength);
  return { url, final_url: page.url, title: page.title, content, truncated, status: 200, source: 'fixture' };
}

const corpusLinksOn = (page: FixturePage, pages: FixturePage[]) =>
  pages.filter((other) => new URL(other.url).host === new URL(page.url).host).map((other) => other.url);
