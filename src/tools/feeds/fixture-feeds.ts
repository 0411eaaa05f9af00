import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Where the offline feed set is served: a file `markets.xml` of NEWS_FEEDS_DIR answers for `${FIXTURE_FEED_ORIGIN}/markets.xml`. */
export const FIXTURE_FEED_ORIGIN = 'https://feeds.agentgate.example';

export interface FixtureFeeds {
  urls: string[];
  /** The feed's XML, when the set has that url. */
  find(url: string): string | undefined;
}

const sets = new Map<string, FixtureFeeds>();

/** The offline feed set of `directory` (every `*.xml` and `*.atom`), read once per process, like the search corpus. */
export function fixtureFeedsAt(directory: string): FixtureFeeds {
  let feeds = sets.get(directory);
  if (!feeds) {
    const files = readdirSync(directory).filter((name) => /\.(xml|atom|rss)$/i.test(name)).sort();
    const byUrl = new Map(files.map((name) => [`${FIXTURE_FEED_ORIGIN}/${name}`, readFileSync(path.join(directory, name), 'utf8')]));
    feeds = { urls: [...byUrl.keys()], find: (url) => byUrl.get(url) };
    sets.set(directory, feeds);
  }
  return feeds;
}
