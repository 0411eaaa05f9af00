import robotsParserModule from 'robots-parser';
import { guardedFetch } from '../network/guarded-fetch.ts';
import type { ToolContext } from '../registry.ts';
import { USER_AGENT, WEB_TOOL_HEADERS } from './fetch-page.ts';

// Its types declare an ES default export; the CommonJS module is the function itself.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

export interface RobotsRules {
  isAllowed(url: string): boolean;
  /** What the rules rest on, for the crawl's output. */
  summary: string;
}

export const ALLOW_EVERYTHING: RobotsRules = { isAllowed: () => true, summary: 'not consulted (offline corpus)' };

/**
 * The site's robots.txt rules for our user agent, read as RFC 9309 says: a 4xx answer means no rules; a
 * 5xx answer, or none at all, means the whole site is off limits until robots.txt can be read.
 */
export async function robotsRulesFor(site: URL, context: ToolContext): Promise<RobotsRules> {
  const robotsUrl = new URL('/robots.txt', site).toString();
  let response;
  try {
    response = await guardedFetch(robotsUrl, { network: context.config.network, signal: context.signal, headers: WEB_TOOL_HEADERS });
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    return disallowEverything(`robots.txt could not be fetched (${(error as Error).message}): nothing is crawled`);
  }
  if (response.status >= 500) return disallowEverything(`robots.txt answered ${response.status}: nothing is crawled`);
  if (response.status >= 400) return { isAllowed: () => true, summary: `no robots.txt (${response.status}): everything allowed` };
  const robots = robotsParser(robotsUrl, new TextDecoder().decode(response.body));
  return { isAllowed: (url) => robots.isAllowed(url, USER_AGENT) !== false, summary: `robots.txt of ${site.host} honoured` };
}

const disallowEverything = (summary: string): RobotsRules => ({ isAllowed: () => false, summary });
