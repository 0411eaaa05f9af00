import robotsParserModule from 'robots-parser';

// Its types declare an ES default export; the CommonJS module is the function itself.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** RFC 9309, 2.5: a crawler may stop reading robots.txt after a limit of its own, of at least 500 KiB. */
export const ROBOTS_MAX_CHARACTERS = 500 * 1024;

export interface RobotsQuestion {
  robotsUrl: string;
  /** The file's text, cut at ROBOTS_MAX_CHARACTERS. */
  text: string;
  urls: string[];
  userAgent: string;
}

/**
 * The urls the rules let the user agent fetch. Matching a url costs the length of every rule times the url's
 * length, so a hostile file makes it slow: it runs in a parse worker, like the parse itself.
 */
export function allowedByRobots({ robotsUrl, text, urls, userAgent }: RobotsQuestion): string[] {
  const robots = robotsParser(robotsUrl, text);
  return urls.filter((url) => robots.isAllowed(url, userAgent) !== false);
}
