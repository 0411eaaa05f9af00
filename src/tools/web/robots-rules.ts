import { guardedFetch } from '../network/guarded-fetch.ts';
import type { ToolContext } from '../registry.ts';
import { USER_AGENT, WEB_TOOL_HEADERS } from './fetch-page.ts';
import { parseInWorker } from './parse-pool.ts';
import { ROBOTS_MAX_CHARACTERS, type RobotsQuestion } from './robots-verdicts.ts';

export interface RobotsRules {
  /** Those of `urls` the rules allow, in their order. */
  allowed(urls: string[]): Promise<string[]>;
  /** What the rules rest on, for the crawl's output. */
  summary: string;
}

export const ALLOW_EVERYTHING: RobotsRules = { allowed: async (urls) => urls, summary: 'not consulted (offline corpus)' };

/**
 * The site's robots.txt rules for our user agent, read as RFC 9309 says: a 4xx answer means no rules; a
 * 5xx answer, or none at all, means the whole site is off limits until robots.txt can be read.
 */
export async function robotsRulesFor(site: URL, context: ToolContext): Promise<RobotsRules> {
  const robotsUrl = new URL('/robots.txt', site).toString();
  let response;
  try {
    response = await guardedFetch(robotsUrl, { network: context.settings.network, signal: context.signal, headers: WEB_TOOL_HEADERS });
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    return disallowEverything(`robots.txt could not be fetched (${(error as Error).message}): nothing is crawled`);
  }
  if (response.status >= 500) return disallowEverything(`robots.txt answered ${response.status}: nothing is crawled`);
  if (response.status >= 400) return { allowed: async (urls) => urls, summary: `no robots.txt (${response.status}): everything allowed` };
  const text = new TextDecoder().decode(response.body).slice(0, ROBOTS_MAX_CHARACTERS);
  return { allowed: (urls) => askRobots({ robotsUrl, text, urls, userAgent: USER_AGENT }, site, context), summary: `robots.txt of ${site.host} honoured` };
}

const disallowEverything = (summary: string): RobotsRules => ({ allowed: async () => [], summary });

async function askRobots(question: RobotsQuestion, site: URL, context: ToolContext): Promise<string[]> {
  try {
    return await parseInWorker({ kind: 'robots', question }, context, context.settings.parse);
  } catch (error) {
    if (context.signal.aborted) throw error;
    throw new Error(`robots.txt of ${site.host} could not be read: ${(error as Error).message}`);
  }
}
