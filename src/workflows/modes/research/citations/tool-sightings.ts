/** A finished tool call of the task as the tool_calls table holds it: `error` is null when it succeeded. */
export interface ToolObservation {
  tool: string;
  output: unknown;
  error: string | null;
}

/** `fetch`: a tool read the page itself; `search`: only a search engine's result names it. */
export type ToolSource = 'search' | 'fetch';

/** One page a tool returned, before pages seen several times are merged. */
export interface SourceSighting {
  url: string;
  /** Where a fetch's redirects led (also a url the tool returned). */
  finalUrl: string | undefined;
  title: string;
  snippet: string;
  /** YYYY-MM-DD, when the search provider knew it. */
  publishedDate: string | undefined;
  /** 0..1: how well the page matched what the agent looked for. */
  relevance: number;
  toolSource: ToolSource;
  statusCode: number | undefined;
  /** The page's text, when it was fetched. */
  content: string | undefined;
}

/** A page a tool tried to read and could not (an error, an HTTP error status, robots.txt), with why. */
export interface BlockedUrl {
  url: string;
  reason: string;
}

/** The tools whose successful outputs name pages a report may cite (reference §1.9). */
export const CITABLE_TOOLS = ['web_search', 'web_fetch', 'web_subpage_fetch', 'web_crawl'] as const;

/** A page the agent chose to read is worth more than a search hit (the reference's 0.8). */
const FETCHED_RELEVANCE = 0.8;
/** Search results carry no score of their own: their rank stands for it, from 0.7 down to 0.3. */
const searchRelevance = (rank: number) => Math.max(0.3, 0.7 - 0.05 * rank);

/**
 * Every page the task's successful web tool calls returned, in the order of the calls, and the pages they could
 * not read. Calls that failed, other tools and outputs of an unexpected shape contribute nothing: a citation can
 * only come from a page a tool returned.
 */
export function collectSightings(observations: readonly ToolObservation[]): { sightings: SourceSighting[]; blocked: BlockedUrl[] } {
  const sightings: SourceSighting[] = [];
  const blocked: BlockedUrl[] = [];
  for (const observation of observations) {
    if (observation.error !== null || !(CITABLE_TOOLS as readonly string[]).includes(observation.tool)) continue;
    const output = asRecord(parsedOutput(observation.output));
    if (!output) continue;
    if (observation.tool === 'web_search') sightings.push(...searchSightings(output));
    else readPages(output, sightings, blocked);
  }
  return { sightings, blocked };
}

function searchSightings(output: Record<string, unknown>): SourceSighting[] {
  const results = Array.isArray(output.results) ? output.results : [];
  return results.flatMap((value, rank) => {
    const result = asRecord(value);
    if (!result || typeof result.url !== 'string') return [];
    return [{
      url: result.url, finalUrl: undefined, title: text(result.title), snippet: text(result.snippet),
      publishedDate: typeof result.date === 'string' ? result.date : undefined,
      relevance: searchRelevance(rank), toolSource: 'search' as const, statusCode: undefined, content: undefined,
    }];
  });
}

/** web_fetch (one page, or `pages`), web_subpage_fetch (`pages`) and web_crawl (`pages`, `disallowed_by_robots`). */
function readPages(output: Record<string, unknown>, sightings: SourceSighting[], blocked: BlockedUrl[]): void {
  const pages = Array.isArray(output.pages) ? output.pages : [output];
  for (const value of pages) {
    const page = asRecord(value);
    if (!page || typeof page.url !== 'string') continue;
    const status = typeof page.status === 'number' ? page.status : undefined;
    if (typeof page.error === 'string') blocked.push({ url: page.url, reason: page.error });
    else if (status !== undefined && status >= 400) blocked.push({ url: page.url, reason: `HTTP ${status}` });
    else if (typeof page.content === 'string') sightings.push(fetchedSighting(page, status));
  }
  const refused = Array.isArray(output.disallowed_by_robots) ? output.disallowed_by_robots : [];
  for (const url of refused) if (typeof url === 'string') blocked.push({ url, reason: 'disallowed by robots.txt' });
}

function fetchedSighting(page: Record<string, unknown>, status: number | undefined): SourceSighting {
  return {
    url: page.url as string, finalUrl: typeof page.final_url === 'string' ? page.final_url : undefined,
    title: text(page.title), snippet: '', publishedDate: undefined, relevance: FETCHED_RELEVANCE,
    toolSource: 'fetch', statusCode: status, content: page.content as string,
  };
}

/** Outputs are stored as JSON; one stored as a JSON string is read the same. */
function parsedOutput(output: unknown): unknown {
  if (typeof output !== 'string') return output;
  try {
    return JSON.parse(output);
  } catch {
    return undefined;
  }
}

const asRecord = (value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined);
const text = (value: unknown) => (typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '');
