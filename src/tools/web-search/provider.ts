import type { TSchema, Static } from 'typebox';
import { Value } from 'typebox/value';
import type { WebSearchProviderName } from '../../config.ts';

/** No provider is asked for more than this many results in one call. */
export const MAX_SEARCH_RESULTS = 20;

export interface SearchRequest {
  query: string;
  maxResults: number;
  /** A domain: results come from it or its subdomains only. */
  siteFilter?: string;
  signal: AbortSignal;
}

export interface SearchResult {
  title: string;
  url: string;
  /** The passage of the page that best matches the query, as plain text. */
  snippet: string;
  /** Publication date (YYYY-MM-DD) when the provider knows it. */
  date?: string;
  /** Who found or published it: the corpus's source for fixture pages, the provider (and engine) otherwise. */
  source: string;
}

/** One web-search backend. Every failure is a SearchFailure whose message the model can act on. */
export interface SearchProvider {
  name: WebSearchProviderName;
  search(request: SearchRequest): Promise<SearchResult[]>;
}

export type SearchFailureKind = 'missing-credential' | 'auth' | 'rate-limited' | 'malformed' | 'upstream';

export class SearchFailure extends Error {
  readonly kind: SearchFailureKind;
  readonly provider: WebSearchProviderName;
  /** From a 429's Retry-After (or the vendor's own reset header), when it says. */
  readonly retryAfterSeconds: number | undefined;

  constructor(provider: WebSearchProviderName, kind: SearchFailureKind, message: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SearchFailure';
    this.provider = provider;
    this.kind = kind;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The settings every vendor client takes: tests point `baseUrl` at a local stand-in. */
export interface VendorClientOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  maxAnswerBytes: number;
}

/** A vendor endpoint under its base url, keeping any path prefix the base has (a SearXNG instance under /searx, a proxy). */
export const endpointOf = (baseUrl: string, path: string) => new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);

/** Results asked of a vendor: the tool's count, capped. */
export const cappedCount = (maxResults: number) => Math.max(1, Math.min(MAX_SEARCH_RESULTS, Math.floor(maxResults)));

/** `site:` prefixed, for vendors whose query language filters by site (Brave, SearXNG's engines). */
export const withSiteOperator = (query: string, siteFilter: string | undefined) => (siteFilter ? `site:${siteFilter} ${query}` : query);

/** A vendor's date as YYYY-MM-DD; a relative or unparseable one ("3 days ago") is left out. */
export function calendarDate(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString().slice(0, 10);
}

const SNIPPET_CHARS = 300;

/** Vendors mark matches with tags (Brave's <strong>) and escape entities; the model reads plain text. */
export function plainSnippet(text: unknown): string {
  if (typeof text !== 'string') return '';
  const plain = text.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|#39|#x27|nbsp);/g, (entity) => ENTITIES[entity]).replace(/\s+/g, ' ').trim();
  return plain.length <= SNIPPET_CHARS ? plain : `${plain.slice(0, SNIPPET_CHARS).replace(/\s+\S*$/, '')}…`;
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'", '&nbsp;': ' ',
};

/** Whether a url is on the domain or one of its subdomains. */
export function isOnSite(url: string, site: string): boolean {
  try {
    const host = new URL(url).hostname.toLowerCase();
    const domain = site.toLowerCase().replace(/^www\./, '');
    return host === domain || host.endsWith(`.${domain}`);
  } catch {
    return false;
  }
}

/** The vendor's answer if it has the shape its documentation gives (extra fields are fine), else a `malformed` failure naming the field. */
export function checkAnswer<Schema extends TSchema>(provider: WebSearchProviderName, schema: Schema, answer: unknown): Static<Schema> {
  if (Value.Check(schema, answer)) return answer;
  const problem = Value.Errors(schema, answer)[0];
  throw new SearchFailure(provider, 'malformed', `${provider} answered in an unexpected shape: ${problem?.instancePath || '/'} ${problem?.message ?? 'is invalid'}`);
}
